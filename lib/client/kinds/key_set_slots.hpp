#pragma once
// A key set on a Redis Cluster member: the cluster runs a script only on keys of one slot,
// so the set's keys are sent as one script per slot (each on its slot's master), and the
// member's answer combines theirs all-or-none: it grants the set only when every slot
// granted its keys. A member on which one slot refused and others granted answers
// `held`, and the keys it granted are released at once (held.cpp), so no member keeps a
// part of a set that it did not grant as a whole. Members that are one server take the set
// in one script, as before.

#include <cstddef>
#include <string>
#include <vector>

#include "client/nodes/node.hpp"

namespace redlock::detail {

/// The keys of one slot, with their positions in the set.
struct SlotGroup {
  std::vector<std::size_t> positions;
  std::vector<std::string> keys;
};

/// The set's keys grouped by slot (`by_slot`: Node::routes_by_slot), the groups in the
/// order of their first key and the keys in the set's order; one group otherwise.
std::vector<SlotGroup> slot_groups(const std::vector<std::string>& keys, bool by_slot);

/// Which call the replies answer: the precedence of their statuses differs.
enum class SlotCall { acquire, extend, release, fence };

/// The member's one reply out of its slots' `parts` (parts[i] answers groups[i]):
///   every part granted: granted, with the parts' fencing tokens placed at their keys'
///     positions (none when a part has none) and the fewest replica acknowledgements;
///   acquire: else the first transport or Redis error (the attempt's leftovers are then
///     released on this member like any other), else the first `held`;
///   extend, fence: else the first `not_held`, else the first error;
///   release: else the first error, else the first `not_held`.
NodeReply combine_slot_replies(SlotCall call, std::vector<NodeReply>&& parts,
                               const std::vector<SlotGroup>& groups, std::size_t key_count);

}  // namespace redlock::detail

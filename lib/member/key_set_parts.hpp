#pragma once
// A key set on a Redis Cluster member: the cluster runs a script only on keys of one slot,
// so the set's keys are sent as one script per slot (each on its slot's master), and the
// member's answer combines theirs all-or-none: it grants the set only when every slot
// granted its keys. A member on which one slot refused and others granted answers `held`,
// and the keys it granted are released at once, so no member keeps a part of a set that it
// did not grant as a whole. Members that are one server take the set in one script
// (Node::run_key_set's default).

#include <chrono>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "member/node.hpp"

namespace redlock::detail {

/// The keys of one slot, by their positions in the set.
struct SlotGroup {
  std::vector<std::size_t> positions;
};

/// The set's keys grouped by slot, the groups in the order of their first key and the
/// positions in the set's order.
std::vector<SlotGroup> slot_groups(std::span<const std::string> keys);

/// The member's one reply out of its slots' `parts` (parts[i] answers groups[i]):
///   every part granted: granted, with the parts' fencing tokens placed at their keys'
///     positions (none when a part has none), the fewest replica acknowledgements and the
///     strictest part's guard;
///   acquire: else the first transport or Redis error (the attempt's leftovers are then
///     released on this member like any other), else the first `held`;
///   extend, fence: else the first `not_held`, else the first error;
///   release: else the first error, else the first `not_held`.
NodeReply combine_slot_replies(KeySetCall call, std::vector<NodeReply>&& parts,
                               const std::vector<SlotGroup>& groups, std::size_t key_count);

/// Node::run_key_set of a cluster member: one script per slot, in parallel (a release's
/// first-key slot last, once the others answered: waiters listen on that key's channel, and
/// one woken by its announcement must find the whole set free); one answer for the set.
void run_key_set_by_slot(Node& node, std::span<const std::string> keys, const KeySetScript& script,
                         std::chrono::milliseconds timeout, ReplyReader read, NodeCallback done);

}  // namespace redlock::detail

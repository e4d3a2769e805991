#include "client/kinds/key_set_slots.hpp"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "net/cluster_slot.hpp"

namespace redlock::detail {

namespace {

bool is_error(const NodeReply& reply) {
  return reply.status != NodeStatus::granted && reply.status != NodeStatus::held &&
         reply.status != NodeStatus::not_held;
}

// The first part that `matches`, or nullptr.
template <typename Predicate>
NodeReply* first(std::vector<NodeReply>& parts, Predicate matches) {
  const auto found = std::find_if(parts.begin(), parts.end(), matches);
  return found == parts.end() ? nullptr : &*found;
}

}  // namespace

std::vector<SlotGroup> slot_groups(const std::vector<std::string>& keys, bool by_slot) {
  std::vector<SlotGroup> groups;
  std::vector<std::uint16_t> slots;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::uint16_t slot = by_slot ? net::key_slot(keys[i]) : 0;
    const auto index =
        static_cast<std::size_t>(std::find(slots.begin(), slots.end(), slot) - slots.begin());
    if (index == slots.size()) {
      slots.push_back(slot);
      groups.emplace_back();
    }
    groups[index].positions.push_back(i);
    groups[index].keys.push_back(keys[i]);
  }
  return groups;
}

NodeReply combine_slot_replies(SlotCall call, std::vector<NodeReply>&& parts,
                               const std::vector<SlotGroup>& groups, std::size_t key_count) {
  const bool all_granted = std::all_of(parts.begin(), parts.end(), [](const NodeReply& part) {
    return part.status == NodeStatus::granted;
  });
  if (!all_granted) {
    const auto with = [](NodeStatus status) {
      return [status](const NodeReply& part) { return part.status == status; };
    };
    NodeReply* chosen = nullptr;
    switch (call) {
      case SlotCall::acquire:
        chosen = first(parts, is_error);
        if (chosen == nullptr) chosen = first(parts, with(NodeStatus::held));
        break;
      case SlotCall::extend:
      case SlotCall::fence:
        chosen = first(parts, with(NodeStatus::not_held));
        if (chosen == nullptr) chosen = first(parts, is_error);
        break;
      case SlotCall::release:
        chosen = first(parts, is_error);
        if (chosen == nullptr) chosen = first(parts, with(NodeStatus::not_held));
        break;
    }
    // Not all granted, so some part is one of those.
    return std::move(*chosen);
  }
  core::ReplicaAcks acks = parts.front().acks;
  // The grant counts only if every shard that gave a part of it may be counted.
  const core::MemberGuard* guard = parts.front().guard;
  bool fenced = true;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    acks.required = std::max(acks.required, parts[i].acks.required);
    acks.acked = std::min(acks.acked, parts[i].acks.acked);
    guard = core::stricter_guard(guard, parts[i].guard);
    fenced =
        fenced && !parts[i].tokens.empty() && parts[i].tokens.size() == groups[i].positions.size();
  }
  std::vector<std::uint64_t> tokens;
  if (fenced) {
    tokens.assign(key_count, 0);
    for (std::size_t i = 0; i < parts.size(); ++i) {
      for (std::size_t k = 0; k < parts[i].tokens.size(); ++k) {
        tokens[groups[i].positions[k]] = parts[i].tokens[k];
      }
    }
  }
  NodeReply combined = std::move(parts.front());
  combined.acks = acks;
  combined.guard = guard;
  // Tokens that do not add up stay as the first slot gave them: too few for the set, which
  // the caller reports (Kind::token_count_mismatch).
  if (fenced) combined.tokens = std::move(tokens);
  return combined;
}

}  // namespace redlock::detail

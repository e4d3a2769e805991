// A key set on a Redis Cluster member (client/kinds/key_set_slots.hpp): which keys go
// together in one script, and how the slots' replies make the member's one answer.

#include "client/kinds/key_set_slots.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "net/cluster_slot.hpp"

namespace redlock::detail {
namespace {

NodeReply reply(NodeStatus status, std::vector<std::uint64_t> tokens = {}) {
  NodeReply one;
  one.status = status;
  one.tokens = std::move(tokens);
  one.detail = to_string(status);
  return one;
}

std::vector<NodeReply> replies(std::vector<NodeReply> all) {
  return all;
}

TEST(KeySetSlots, KeysAreGroupedBySlotInTheSetsOrder) {
  // "a" and "{a}:2" share a slot; "b" has another.
  ASSERT_NE(net::key_slot("a"), net::key_slot("b"));
  const std::vector<std::string> keys = {"a", "b", "{a}:2", "{b}:2"};
  const auto groups = slot_groups(keys, /*by_slot=*/true);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].keys, (std::vector<std::string>{"a", "{a}:2"}));
  EXPECT_EQ(groups[0].positions, (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(groups[1].keys, (std::vector<std::string>{"b", "{b}:2"}));
  EXPECT_EQ(groups[1].positions, (std::vector<std::size_t>{1, 3}));
  const auto one = slot_groups(keys, /*by_slot=*/false);
  ASSERT_EQ(one.size(), 1u) << "a member that is one server takes the set in one script";
  EXPECT_EQ(one[0].keys, keys);
}

TEST(KeySetSlots, AMemberGrantsTheSetOnlyWhenEverySlotGranted) {
  const auto groups = slot_groups({"a", "b", "{a}:2"}, true);
  auto granted = combine_slot_replies(
      SlotCall::acquire,
      replies({reply(NodeStatus::granted, {7, 9}), reply(NodeStatus::granted, {4})}), groups, 3);
  EXPECT_EQ(granted.status, NodeStatus::granted);
  EXPECT_EQ(granted.tokens, (std::vector<std::uint64_t>{7, 4, 9})) << "tokens at their keys";

  auto refused = combine_slot_replies(
      SlotCall::acquire, replies({reply(NodeStatus::granted), reply(NodeStatus::held)}), groups, 3);
  EXPECT_EQ(refused.status, NodeStatus::held);
  // An error wins over a refusal: the attempt's leftovers are then released on the member
  // (a refusal is skipped there), and the slot that timed out may have granted.
  auto failed = combine_slot_replies(
      SlotCall::acquire, replies({reply(NodeStatus::held), reply(NodeStatus::timeout)}), groups, 3);
  EXPECT_EQ(failed.status, NodeStatus::timeout);
}

TEST(KeySetSlots, ExtendAndFenceFailOnAnySlotThatLostItsKeys) {
  const auto groups = slot_groups({"a", "b"}, true);
  for (const auto call : {SlotCall::extend, SlotCall::fence}) {
    auto lost = combine_slot_replies(
        call, replies({reply(NodeStatus::timeout), reply(NodeStatus::not_held)}), groups, 2);
    EXPECT_EQ(lost.status, NodeStatus::not_held);
    auto slow = combine_slot_replies(
        call, replies({reply(NodeStatus::granted), reply(NodeStatus::timeout)}), groups, 2);
    EXPECT_EQ(slow.status, NodeStatus::timeout);
  }
  auto released = combine_slot_replies(
      SlotCall::release, replies({reply(NodeStatus::granted), reply(NodeStatus::granted)}), groups,
      2);
  EXPECT_EQ(released.status, NodeStatus::granted);
  // A release that may not have reached a slot says so rather than "not held".
  auto unsure = combine_slot_replies(
      SlotCall::release, replies({reply(NodeStatus::not_held), reply(NodeStatus::timeout)}), groups,
      2);
  EXPECT_EQ(unsure.status, NodeStatus::timeout);
}

TEST(KeySetSlots, TheFewestReplicaAcknowledgementsCount) {
  const auto groups = slot_groups({"a", "b"}, true);
  auto first = reply(NodeStatus::granted);
  first.acks = {1, 1};
  auto second = reply(NodeStatus::granted);
  second.acks = {1, 0};
  auto combined = combine_slot_replies(SlotCall::acquire, replies({first, second}), groups, 2);
  EXPECT_EQ(combined.acks.required, 1);
  EXPECT_EQ(combined.acks.acked, 0) << "one slot's grant unacknowledged: the set's is too";
}

TEST(KeySetSlots, TheStrictestShardsGuardJudgesTheSetsGrant) {
  const auto groups = slot_groups({"a", "b", "c"}, true);
  ASSERT_EQ(groups.size(), 3u);
  core::MemberGuard clear;
  core::MemberGuard restarted;
  restarted.until = core::Clock::now() + std::chrono::hours(1);
  restarted.reason = "run_id changed";
  core::MemberGuard unknown;
  unknown.known = false;
  // Every position of the strictest part, so that neither the first nor the last wins by
  // its place.
  for (std::size_t strict = 0; strict < groups.size(); ++strict) {
    std::vector<NodeReply> parts;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      parts.push_back(reply(NodeStatus::granted));
      parts.back().guard = i == strict ? &unknown : (i % 2 ? &restarted : &clear);
    }
    auto combined = combine_slot_replies(SlotCall::acquire, std::move(parts), groups, 3);
    EXPECT_EQ(combined.guard, &unknown) << "the strictest part is slot group " << strict;
  }
  // One part of a member-wide guard (no shard known): the member's guard judges it.
  auto with_member =
      replies({reply(NodeStatus::granted), reply(NodeStatus::granted), reply(NodeStatus::granted)});
  with_member[0].guard = &clear;
  with_member[2].guard = &restarted;
  EXPECT_EQ(combine_slot_replies(SlotCall::acquire, std::move(with_member), groups, 3).guard,
            nullptr);
}

TEST(KeySetSlots, TokensThatDoNotAddUpAreLeftShort) {
  const auto groups = slot_groups({"a", "b"}, true);
  auto combined = combine_slot_replies(
      SlotCall::acquire, replies({reply(NodeStatus::granted, {3}), reply(NodeStatus::granted)}),
      groups, 2);
  EXPECT_EQ(combined.status, NodeStatus::granted);
  EXPECT_NE(combined.tokens.size(), 2u) << "a count the caller reports as a mismatch";
}

}  // namespace
}  // namespace redlock::detail

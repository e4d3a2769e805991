// A key set on a Redis Cluster member (member/key_set_parts.hpp): which keys go
// together in one script, and how the slots' replies make the member's one answer.

#include "member/key_set_parts.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "inert_node.hpp"
#include "net/cluster_slot.hpp"
#include "scripts/kind_scripts.hpp"

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

NodeReply interpret_nothing(const redisReply*, std::string_view) {
  return {};
}

TEST(KeySetSlots, KeysAreGroupedBySlotInTheSetsOrder) {
  // "a" and "{a}:2" share a slot; "b" has another.
  ASSERT_NE(net::key_slot("a"), net::key_slot("b"));
  const std::vector<std::string> keys = {"a", "b", "{a}:2", "{b}:2"};
  const auto groups = slot_groups(keys);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].positions, (std::vector<std::size_t>{0, 2}));
  EXPECT_EQ(groups[1].positions, (std::vector<std::size_t>{1, 3}));
}

TEST(KeySetSlots, AMemberGrantsTheSetOnlyWhenEverySlotGranted) {
  const auto groups = slot_groups(std::vector<std::string>{"a", "b", "{a}:2"});
  auto granted = combine_slot_replies(
      KeySetCall::acquire,
      replies({reply(NodeStatus::granted, {7, 9}), reply(NodeStatus::granted, {4})}), groups, 3);
  EXPECT_EQ(granted.status, NodeStatus::granted);
  EXPECT_EQ(granted.tokens, (std::vector<std::uint64_t>{7, 4, 9})) << "tokens at their keys";

  auto refused = combine_slot_replies(
      KeySetCall::acquire, replies({reply(NodeStatus::granted), reply(NodeStatus::held)}), groups,
      3);
  EXPECT_EQ(refused.status, NodeStatus::held);
  // An error wins over a refusal: the attempt's leftovers are then released on the member
  // (a refusal is skipped there), and the slot that timed out may have granted.
  auto failed = combine_slot_replies(KeySetCall::acquire,
                                     replies({reply(NodeStatus::held), reply(NodeStatus::timeout)}),
                                     groups, 3);
  EXPECT_EQ(failed.status, NodeStatus::timeout);
}

TEST(KeySetSlots, ExtendAndFenceFailOnAnySlotThatLostItsKeys) {
  const auto groups = slot_groups(std::vector<std::string>{"a", "b"});
  for (const auto call : {KeySetCall::extend, KeySetCall::fence}) {
    auto lost = combine_slot_replies(
        call, replies({reply(NodeStatus::timeout), reply(NodeStatus::not_held)}), groups, 2);
    EXPECT_EQ(lost.status, NodeStatus::not_held);
    auto slow = combine_slot_replies(
        call, replies({reply(NodeStatus::granted), reply(NodeStatus::timeout)}), groups, 2);
    EXPECT_EQ(slow.status, NodeStatus::timeout);
  }
  auto released = combine_slot_replies(
      KeySetCall::release, replies({reply(NodeStatus::granted), reply(NodeStatus::granted)}),
      groups, 2);
  EXPECT_EQ(released.status, NodeStatus::granted);
  // A release that may not have reached a slot says so rather than "not held".
  auto unsure = combine_slot_replies(
      KeySetCall::release, replies({reply(NodeStatus::not_held), reply(NodeStatus::timeout)}),
      groups, 2);
  EXPECT_EQ(unsure.status, NodeStatus::timeout);
}

TEST(KeySetSlots, TheFewestReplicaAcknowledgementsCount) {
  const auto groups = slot_groups(std::vector<std::string>{"a", "b"});
  auto first = reply(NodeStatus::granted);
  first.acks = {1, 1};
  auto second = reply(NodeStatus::granted);
  second.acks = {1, 0};
  auto combined = combine_slot_replies(KeySetCall::acquire, replies({first, second}), groups, 2);
  EXPECT_EQ(combined.acks.required, 1);
  EXPECT_EQ(combined.acks.acked, 0) << "one slot's grant unacknowledged: the set's is too";
}

TEST(KeySetSlots, TheStrictestShardsGuardJudgesTheSetsGrant) {
  const auto groups = slot_groups(std::vector<std::string>{"a", "b", "c"});
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
    auto combined = combine_slot_replies(KeySetCall::acquire, std::move(parts), groups, 3);
    EXPECT_EQ(combined.guard, &unknown) << "the strictest part is slot group " << strict;
  }
  // One part of a member-wide guard (no shard known): the member's guard judges it.
  auto with_member =
      replies({reply(NodeStatus::granted), reply(NodeStatus::granted), reply(NodeStatus::granted)});
  with_member[0].guard = &clear;
  with_member[2].guard = &restarted;
  EXPECT_EQ(combine_slot_replies(KeySetCall::acquire, std::move(with_member), groups, 3).guard,
            nullptr);
}

TEST(KeySetSlots, TokensThatDoNotAddUpAreLeftShort) {
  const auto groups = slot_groups(std::vector<std::string>{"a", "b"});
  auto combined = combine_slot_replies(
      KeySetCall::acquire, replies({reply(NodeStatus::granted, {3}), reply(NodeStatus::granted)}),
      groups, 2);
  EXPECT_EQ(combined.status, NodeStatus::granted);
  EXPECT_NE(combined.tokens.size(), 2u) << "a count the caller reports as a mismatch";
}

// A member that records every script it is asked to run and answers only when the test
// says: what run_key_set_by_slot sends, in which order, and what it makes of the answers.
class RecordingNode final : public InertNode {
 public:
  RecordingNode() : InertNode("recording") {}
  struct Call {
    std::string script;
    std::vector<std::string> keys;
    std::vector<std::string> args;
    bool release = false;
    NodeCallback done;
  };
  std::vector<Call> calls;

  void run(const Command& command, std::chrono::milliseconds, NodeCallback&& done) override {
    record(command, false, std::move(done));
  }
  void release(const Command& command, std::chrono::milliseconds, NodeCallback&& done) override {
    record(command, true, std::move(done));
  }

 private:
  void record(const Command& command, bool release, NodeCallback done) {
    calls.push_back({std::string(command.script->name),
                     {command.keys.begin(), command.keys.end()},
                     {command.args.begin(), command.args.end()},
                     release,
                     std::move(done)});
  }
};

// Three keys in three slots; "{a}:2" shares "a"'s.
const std::vector<std::string> set_keys = {"a", "b", "{a}:2", "c"};

KeySetScript script_of(KeySetCall call, const std::vector<std::string>& keys) {
  static std::function<void(std::span<const std::size_t>, ScriptCall&)> part;
  static std::function<void(std::span<const std::size_t>, ScriptCall&)> undo;
  part = [&keys](std::span<const std::size_t> positions, ScriptCall& out) {
    for (const auto at : positions) out.keys.emplace_back(keys[at]);
    out.args.push_back(out.own(positions.front() == 0 ? "first" : "other"));
  };
  undo = [&keys](std::span<const std::size_t> positions, ScriptCall& out) {
    for (const auto at : positions) out.keys.emplace_back(keys[at]);
    out.args.push_back(out.own("undo"));
  };
  const bool acquire = call == KeySetCall::acquire;
  const auto& script = acquire                       ? scripts::multi_acquire()
                       : call == KeySetCall::release ? scripts::multi_release()
                       : call == KeySetCall::extend  ? scripts::multi_extend()
                                                     : scripts::multi_fence();
  return {call, &script, part, acquire ? &scripts::multi_release() : nullptr, undo};
}

TEST(KeySetSlots, EveryPatternOfSlotAnswersToAnAcquire) {
  ASSERT_EQ(slot_groups(set_keys).size(), 3u);
  const NodeStatus answers[] = {NodeStatus::granted, NodeStatus::held, NodeStatus::timeout};
  for (int pattern = 0; pattern < 27; ++pattern) {
    SCOPED_TRACE("pattern " + std::to_string(pattern));
    RecordingNode node;
    std::optional<NodeReply> answer;
    run_key_set_by_slot(node, set_keys, script_of(KeySetCall::acquire, set_keys),
                        std::chrono::milliseconds(100), interpret_nothing,
                        [&](NodeReply&& reply) { answer = std::move(reply); });
    ASSERT_EQ(node.calls.size(), 3u) << "one script per slot, all at once";
    EXPECT_EQ(node.calls[0].keys, (std::vector<std::string>{"a", "{a}:2"}));
    EXPECT_EQ(node.calls[1].keys, (std::vector<std::string>{"b"}));
    EXPECT_EQ(node.calls[2].keys, (std::vector<std::string>{"c"}));
    std::vector<NodeStatus> statuses;
    for (int i = 0, rest = pattern; i < 3; ++i, rest /= 3) statuses.push_back(answers[rest % 3]);
    for (int i = 0; i < 3; ++i) {
      EXPECT_FALSE(answer) << "answered before its last slot";
      node.calls[i].done(reply(statuses[i]));
    }
    ASSERT_TRUE(answer);
    const auto count = [&](NodeStatus status) {
      return std::count(statuses.begin(), statuses.end(), status);
    };
    const NodeStatus expected = count(NodeStatus::granted) == 3  ? NodeStatus::granted
                                : count(NodeStatus::timeout) > 0 ? NodeStatus::timeout
                                                                 : NodeStatus::held;
    EXPECT_EQ(answer->status, expected);
    // A refused set leaves no part on the member; an unsure one is left to the attempt's
    // leftover release, like any member's.
    std::vector<std::vector<std::string>> undone;
    for (std::size_t i = 3; i < node.calls.size(); ++i) {
      EXPECT_TRUE(node.calls[i].release);
      EXPECT_EQ(node.calls[i].args, (std::vector<std::string>{"undo"}));
      undone.push_back(node.calls[i].keys);
    }
    std::vector<std::vector<std::string>> expected_undone;
    if (expected == NodeStatus::held) {
      for (int i = 0; i < 3; ++i) {
        if (statuses[i] == NodeStatus::granted) expected_undone.push_back(node.calls[i].keys);
      }
    }
    EXPECT_EQ(undone, expected_undone);
  }
}

TEST(KeySetSlots, AReleaseFreesTheFirstKeysSlotLastAndAnnouncesThereAlone) {
  for (const auto first_answer :
       {NodeStatus::granted, NodeStatus::not_held, NodeStatus::timeout, NodeStatus::cancelled}) {
    SCOPED_TRACE(to_string(first_answer));
    RecordingNode node;
    std::optional<NodeReply> answer;
    run_key_set_by_slot(node, set_keys, script_of(KeySetCall::release, set_keys),
                        std::chrono::milliseconds(100), interpret_nothing,
                        [&](NodeReply&& reply) { answer = std::move(reply); });
    ASSERT_EQ(node.calls.size(), 2u) << "the other slots first";
    EXPECT_EQ(node.calls[0].keys, (std::vector<std::string>{"b"}));
    EXPECT_EQ(node.calls[1].keys, (std::vector<std::string>{"c"}));
    for (const auto& call : node.calls) {
      EXPECT_TRUE(call.release) << "re-sent like every release if it may not have arrived";
      EXPECT_EQ(call.args, (std::vector<std::string>{"other"}));
    }
    node.calls[0].done(reply(first_answer));
    node.calls[1].done(reply(NodeStatus::granted));
    if (first_answer == NodeStatus::cancelled) {
      EXPECT_EQ(node.calls.size(), 2u) << "a closing client sends nothing more";
      ASSERT_TRUE(answer);
      EXPECT_EQ(answer->status, NodeStatus::cancelled);
      continue;
    }
    ASSERT_EQ(node.calls.size(), 3u);
    EXPECT_FALSE(answer);
    EXPECT_EQ(node.calls[2].keys, (std::vector<std::string>{"a", "{a}:2"}));
    EXPECT_EQ(node.calls[2].args, (std::vector<std::string>{"first"}));
    node.calls[2].done(reply(NodeStatus::granted));
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->status,
              first_answer == NodeStatus::granted ? NodeStatus::granted : first_answer);
  }
}

TEST(KeySetSlots, ASetInOneSlotIsOneScript) {
  const std::vector<std::string> keys = {"{x}1", "{x}2"};
  for (const auto call :
       {KeySetCall::acquire, KeySetCall::extend, KeySetCall::release, KeySetCall::fence}) {
    RecordingNode node;
    std::optional<NodeReply> answer;
    run_key_set_by_slot(node, keys, script_of(call, keys), std::chrono::milliseconds(100),
                        interpret_nothing, [&](NodeReply&& reply) { answer = std::move(reply); });
    ASSERT_EQ(node.calls.size(), 1u);
    EXPECT_EQ(node.calls[0].keys, keys);
    EXPECT_EQ(node.calls[0].release, call == KeySetCall::release);
    node.calls[0].done(reply(NodeStatus::not_held));
    ASSERT_TRUE(answer);
    EXPECT_EQ(answer->status, NodeStatus::not_held);
  }
}

}  // namespace
}  // namespace redlock::detail

// What a failed acquire round's refusals say to a waiter (client/rounds/round.hpp): the order
// the contenders of a split vote agree on without a message.

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "client/rounds/round.hpp"

namespace redlock::detail {
namespace {

using namespace std::chrono_literals;

NodeOutcome held(std::string holder, std::chrono::milliseconds ttl) {
  NodeOutcome outcome;
  outcome.status = NodeStatus::held;
  outcome.holder = std::move(holder);
  outcome.remaining_ttl = ttl;
  return outcome;
}

NodeOutcome with(NodeStatus status) {
  NodeOutcome outcome;
  outcome.status = status;
  return outcome;
}

RoundResult round_of(std::vector<NodeOutcome> outcomes) {
  RoundResult round;
  round.quorum = static_cast<int>(outcomes.size()) / 2 + 1;
  round.outcomes = std::move(outcomes);
  return round;
}

TEST(RoundResultTest, TheContenderWhoseValueOrdersBeforeEveryRefusalGoesFirst) {
  const auto round = round_of({held("5c", 900ms), held("77", 900ms), with(NodeStatus::granted),
                               with(NodeStatus::granted), with(NodeStatus::timeout)});
  EXPECT_TRUE(round.orders_first("3f"));
  EXPECT_FALSE(round.orders_first("60")) << "5c orders before it";
  EXPECT_FALSE(round.orders_first("80"));
  EXPECT_FALSE(round.orders_first("5c")) << "an equal value is no order";
  // Refused by nobody (timeouts, errors): there is no contender to order against.
  EXPECT_FALSE(round_of({with(NodeStatus::timeout), with(NodeStatus::granted),
                         with(NodeStatus::connection_error)})
                   .orders_first("00"));
}

}  // namespace
}  // namespace redlock::detail

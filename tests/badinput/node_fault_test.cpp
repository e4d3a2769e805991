// Every node-side row of the bad-input table, twice: one bad node of five (a quorum of
// healthy nodes still locks) and three of five (no quorum: the error names each bad node
// and its cause, and nothing stays locked on the healthy ones).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <redlock/redlock.hpp>

#include "harness.hpp"
#include "node_faults.hpp"

namespace redlock::badinput {
namespace {

using ::testing::AnyOf;
using ::testing::HasSubstr;

class NodeFaultTest : public ::testing::TestWithParam<NodeFault> {};

TEST_P(NodeFaultTest, OneBadNodeOfFiveStillLocks) {
  const NodeFault& fault = GetParam();
  BadNodes bad = fault.make(1);
  auto client = Client::create(options(interleave(healthy_urls(4), bad.urls, {2})));
  const std::string key = "orders:" + fault.name + ":1";

  const auto start = Clock::now();
  auto lock = client->try_lock(key, ttl);
  ASSERT_TRUE(lock) << lock.error().message();
  EXPECT_LT(elapsed_ms(start), liveness_bound.count());
  // Decided at the third grant: the bad node may not have answered by then.
  const NodeOutcome& outcome = lock->nodes().at(2);
  EXPECT_EQ(outcome.node, bad.names[0]);
  EXPECT_THAT(outcome.status, AnyOf(NodeStatus::pending, fault.status)) << describe(outcome);
  if (outcome.status == fault.status) {
    EXPECT_EQ(outcome.error, fault.code) << describe(outcome);
    EXPECT_THAT(outcome.detail, HasSubstr(fault.cause));
  }

  auto status = client->status(key);
  ASSERT_TRUE(status) << status.error().message();
  for (std::size_t i : {0, 1, 3, 4}) {
    EXPECT_EQ(status->at(i).status, NodeStatus::held) << describe(status->at(i));
    EXPECT_EQ(status->at(i).holder, lock->value());
  }
  EXPECT_NE(status->at(2).status, NodeStatus::held) << describe(status->at(2));
  RecordProperty("bad_node_status", describe(status->at(2)));

  ASSERT_TRUE(lock->unlock());
  expect_not_held(*client, key, {0, 1, 3, 4});
}

TEST_P(NodeFaultTest, ThreeBadNodesOfFiveNameEachNodeAndCause) {
  const NodeFault& fault = GetParam();
  BadNodes bad = fault.make(3);
  const std::vector<std::size_t> positions{0, 2, 4};
  auto client = Client::create(options(interleave(healthy_urls(2), bad.urls, positions)));
  const std::string key = "orders:" + fault.name + ":3";

  const auto start = Clock::now();
  auto lock = client->try_lock(key, ttl);
  ASSERT_FALSE(lock);
  EXPECT_LT(elapsed_ms(start), liveness_bound.count());
  const Error& error = lock.error();
  RecordProperty("message", error.message());
  EXPECT_EQ(error, errc::quorum_unreachable) << error.message();
  EXPECT_THAT(error.message(), HasSubstr("not acquired: "));
  ASSERT_EQ(error.nodes().size(), 5u);
  for (std::size_t j = 0; j < positions.size(); ++j) {
    const NodeOutcome& outcome = error.nodes()[positions[j]];
    SCOPED_TRACE(describe(outcome));
    EXPECT_EQ(outcome.node, bad.names[j]);
    EXPECT_EQ(outcome.status, fault.status);
    EXPECT_EQ(outcome.error, fault.code);
    EXPECT_THAT(outcome.detail, HasSubstr(fault.cause));
    if (fault.detail_names_node) {
      EXPECT_THAT(outcome.detail, HasSubstr(bad.where[j]));
    }
    // The message carries each node's own line: its URL, what happened, and why.
    EXPECT_THAT(error.message(), HasSubstr(describe(outcome)));
  }
  // The failed attempt released whatever the healthy nodes had granted.
  expect_not_held(*client, key, {1, 3});
}

INSTANTIATE_TEST_SUITE_P(Rows, NodeFaultTest, ::testing::ValuesIn(node_faults()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace redlock::badinput

// Row "a node that accepts and never answers": with a quorum of answering nodes the
// decision does not wait for it; without one, each silent node is reported as a timeout.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <redlock/redlock.hpp>

#include "fake_node.hpp"
#include "harness.hpp"

namespace redlock::badinput {
namespace {

using test::FakeNode;

TEST(SilentNodeTest, QuorumIsDecidedWithoutWaitingForTheSilentNode) {
  FakeNode quiet([](const std::vector<std::string>&) { return std::string(); });
  auto opts = options(interleave(healthy_urls(4), {quiet.url()}, {0}));
  // Twice the bound below: returning within it proves nobody waited for the silent node.
  // (The client's close at the end gives the release sent to it this long to land.)
  opts.node_timeout = 8s;
  auto client = Client::create(opts);
  const auto start = Clock::now();
  auto lock = client->try_lock(test_key(), 10min);
  const auto took = elapsed_ms(start);
  ASSERT_TRUE(lock) << lock.error().message();
  EXPECT_LT(took, 4'000);
  EXPECT_EQ(lock->nodes().at(0).status, NodeStatus::pending) << describe(lock->nodes().at(0));
  // Unlocking is decided by a quorum as well.
  const auto unlock_start = Clock::now();
  ASSERT_TRUE(lock->unlock());
  EXPECT_LT(elapsed_ms(unlock_start), 4'000);
}

}  // namespace
}  // namespace redlock::badinput

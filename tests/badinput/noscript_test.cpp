// Row "NOSCRIPT after SCRIPT FLUSH": a node that lost its script cache (SCRIPT FLUSH,
// restart, failover) answers EVALSHA with NOSCRIPT; the client re-sends the script with
// EVAL, so the user never sees the error.

#include <gtest/gtest.h>

#include <redlock/redlock.hpp>

#include "harness.hpp"

namespace redlock::badinput {
namespace {

void flush_scripts() {
  for (std::size_t i = 0; i < 5; ++i) {
    ASSERT_TRUE(healthy()[i].command({"SCRIPT", "FLUSH"}).is_status("OK")) << "node " << i;
  }
}

TEST(NoscriptTest, EveryOperationSucceedsAfterScriptFlush) {
  auto client = Client::create(options(healthy_urls(5)));
  const std::string key = test_key();
  flush_scripts();
  auto lock = client->lock(key, {.ttl = ttl, .fencing = true});
  ASSERT_TRUE(lock) << lock.error().message();
  EXPECT_TRUE(lock->fencing_token());

  flush_scripts();
  auto status = client->status(key);
  ASSERT_TRUE(status) << status.error().message();
  for (const auto& node : *status) EXPECT_EQ(node.status, NodeStatus::held) << describe(node);

  flush_scripts();
  ASSERT_TRUE(lock->extend(ttl)) << "extend after SCRIPT FLUSH";

  flush_scripts();
  ASSERT_TRUE(lock->unlock());
  expect_not_held(*client, key, {0, 1, 2, 3, 4});
}

}  // namespace
}  // namespace redlock::badinput

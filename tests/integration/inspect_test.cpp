// Client::inspect against five real redis-server processes: for every kind of key each
// node names the kind and exactly the live holders (readers, the writer and a waiting
// writer's intent; permit holders in order of expiry; an exclusive lock's owner), an
// expired holder is left out without being deleted, and neither a key of a foreign
// Redis type nor a node that is down fails the call.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "support/lock_nodes_fixture.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using ::testing::Not;

class InspectTest : public test::LockNodesTest {};

/// (role, value) of `view`'s holders, in the order the node gave them.
std::vector<std::pair<HolderRole, std::string>> holders_of(const NodeView& view) {
  std::vector<std::pair<HolderRole, std::string>> list;
  for (const auto& holder : view.holders) list.emplace_back(holder.role, holder.value);
  return list;
}

/// Every holder's remaining TTL is in (0, ttl].
void expect_ttls_within(const NodeView& view, std::chrono::milliseconds ttl) {
  for (const auto& holder : view.holders) {
    EXPECT_GT(holder.remaining_ttl.count(), 0) << to_string(holder.role) << " " << holder.value;
    EXPECT_LE(holder.remaining_ttl, ttl) << to_string(holder.role) << " " << holder.value;
  }
}

TEST_F(InspectTest, ReadersOfAReadWriteKeyAreListedOnEveryNode) {
  auto client = Client::create(options());
  auto first = client->read_lock("doc", {.ttl = 10s});
  auto second = client->read_lock("doc", {.ttl = 10s});
  ASSERT_TRUE(first && second);
  std::vector<std::string> values{first->value(), second->value()};
  std::sort(values.begin(), values.end());
  std::this_thread::sleep_for(50ms);  // the fifth node may answer after the quorum

  auto views = client->inspect("doc");
  ASSERT_TRUE(views) << views.error().message();
  ASSERT_EQ(views->size(), 5u);
  for (std::size_t node = 0; node < 5; ++node) {
    const auto& view = (*views)[node];
    EXPECT_EQ(view.outcome.node, cluster()[node].url());
    EXPECT_EQ(view.kind, LockKind::read_write);
    EXPECT_EQ(view.outcome.status, NodeStatus::held);
    EXPECT_EQ(holders_of(view),
              (std::vector<std::pair<HolderRole, std::string>>{{HolderRole::reader, values[0]},
                                                               {HolderRole::reader, values[1]}}));
    expect_ttls_within(view, 10s);
  }
}

TEST_F(InspectTest, AWriterAndAWaitingWritersIntentAreTold) {
  auto client = Client::create(options());
  auto writer = client->write_lock("doc", {.ttl = 10s});
  ASSERT_TRUE(writer);
  std::this_thread::sleep_for(50ms);
  auto views = client->inspect("doc");
  ASSERT_TRUE(views);
  for (const auto& view : *views) {
    EXPECT_EQ(view.kind, LockKind::read_write);
    EXPECT_EQ(
        holders_of(view),
        (std::vector<std::pair<HolderRole, std::string>>{{HolderRole::writer, writer->value()}}));
    expect_ttls_within(view, 10s);
  }
  ASSERT_TRUE(writer->unlock());

  // A writer that waits for a reader leaves its intent on the nodes it reaches.
  auto reader = client->read_lock("doc", {.ttl = 10s});
  ASSERT_TRUE(reader);
  auto waiting = std::async(
      std::launch::async, [&] { return client->write_lock("doc", {.ttl = 10s, .wait = 1500ms}); });
  std::this_thread::sleep_for(400ms);
  views = client->inspect("doc");
  ASSERT_TRUE(views);
  int nodes_with_intent = 0;
  for (const auto& view : *views) {
    EXPECT_EQ(view.outcome.status, NodeStatus::held);  // by the reader, not by the intent
    ASSERT_FALSE(view.holders.empty());
    EXPECT_EQ(view.holders.front().role, HolderRole::reader);
    EXPECT_EQ(view.holders.front().value, reader->value());
    if (view.holders.size() == 2) {
      ++nodes_with_intent;
      EXPECT_EQ(view.holders[1].role, HolderRole::intent);
      EXPECT_FALSE(view.holders[1].value.empty());
      EXPECT_NE(view.holders[1].value, reader->value());
    }
    EXPECT_LE(view.holders.size(), 2u);
    expect_ttls_within(view, 10s);
  }
  EXPECT_GE(nodes_with_intent, 3);
  auto refused = waiting.get();
  EXPECT_EQ(refused.code(), make_error_code(errc::conflict));
}

TEST_F(InspectTest, PermitHoldersComeInOrderOfExpiryAndAnExpiredOneIsLeftInPlace) {
  auto client = Client::create(options());
  auto lasting = client->acquire_permit("pool", {.permits = 3, .lock = {.ttl = 20s}});
  auto brief = client->acquire_permit("pool", {.permits = 3, .lock = {.ttl = 5s}});
  ASSERT_TRUE(lasting && brief);
  std::this_thread::sleep_for(50ms);
  auto views = client->inspect("pool");
  ASSERT_TRUE(views);
  for (const auto& view : *views) {
    EXPECT_EQ(view.kind, LockKind::semaphore);
    EXPECT_EQ(view.outcome.status, NodeStatus::held);
    EXPECT_EQ(holders_of(view),
              (std::vector<std::pair<HolderRole, std::string>>{
                  {HolderRole::permit, brief->value()}, {HolderRole::permit, lasting->value()}}));
    ASSERT_EQ(view.holders.size(), 2u);
    EXPECT_LE(view.holders[0].remaining_ttl, 5s);
    EXPECT_GT(view.holders[1].remaining_ttl, 5s);
    expect_ttls_within(view, 20s);
  }

  auto expiring = client->acquire_permit("pool", {.permits = 3, .lock = {.ttl = 300ms}});
  ASSERT_TRUE(expiring);
  std::this_thread::sleep_for(500ms);
  views = client->inspect("pool");
  ASSERT_TRUE(views);
  for (std::size_t node = 0; node < 5; ++node) {
    EXPECT_EQ((*views)[node].holders.size(), 2u) << "an expired permit holder was listed";
  }
  // Inspecting only reads: the expired member stays until a script that writes runs.
  std::this_thread::sleep_for(50ms);
  for (std::size_t node = 0; node < 5; ++node) {
    EXPECT_EQ(cluster()[node].command({"ZCARD", "pool"}).integer, 3) << "node " << node;
  }
}

TEST_F(InspectTest, AnExclusiveKeyReadsAsStatusReadsIt) {
  auto client = Client::create(options());
  auto lock = client->lock("job", {.ttl = 10s});
  ASSERT_TRUE(lock);
  std::this_thread::sleep_for(50ms);
  auto views = client->inspect("job");
  ASSERT_TRUE(views);
  for (const auto& view : *views) {
    EXPECT_EQ(view.kind, LockKind::exclusive);
    EXPECT_EQ(view.outcome.status, NodeStatus::held);
    EXPECT_EQ(view.outcome.holder, lock->value());
    EXPECT_GT(view.outcome.remaining_ttl.count(), 0);
    EXPECT_EQ(
        holders_of(view),
        (std::vector<std::pair<HolderRole, std::string>>{{HolderRole::owner, lock->value()}}));
    expect_ttls_within(view, 10s);
  }
}

TEST_F(InspectTest, AnAbsentKeyAForeignTypeAndADownNodeAreToldApart) {
  auto client = Client::create(options());
  cluster()[4].kill9();
  auto absent = client->inspect("nothing");
  ASSERT_TRUE(absent);
  for (std::size_t node = 0; node < 4; ++node) {
    EXPECT_EQ((*absent)[node].kind, LockKind::none);
    EXPECT_EQ((*absent)[node].outcome.status, NodeStatus::not_held);
    EXPECT_TRUE((*absent)[node].holders.empty());
  }
  EXPECT_EQ((*absent)[4].kind, LockKind::unknown);
  EXPECT_EQ((*absent)[4].outcome.status, NodeStatus::connection_error);

  for (std::size_t node = 0; node < 4; ++node) cluster()[node].command({"RPUSH", "queue", "x"});
  auto foreign = client->inspect("queue");
  ASSERT_TRUE(foreign);
  for (std::size_t node = 0; node < 4; ++node) {
    const auto& view = (*foreign)[node];
    EXPECT_EQ(view.kind, LockKind::other);
    EXPECT_EQ(view.outcome.error, errc::wrong_kind);
    EXPECT_THAT(view.outcome.detail, HasSubstr("a Redis list"));
    EXPECT_THAT(view.outcome.detail, Not(HasSubstr("WRONGTYPE")));
  }
}

TEST_F(InspectTest, TheAsyncFormGivesTheSameViewAndRefusesABadKey) {
  auto client = Client::create(options());
  auto permit = client->acquire_permit("pool", {.permits = 2, .lock = {.ttl = 10s}});
  ASSERT_TRUE(permit);
  std::this_thread::sleep_for(50ms);
  std::promise<Result<std::vector<NodeView>>> done;
  client->inspect_async(
      "pool", [&](Result<std::vector<NodeView>> views) { done.set_value(std::move(views)); });
  auto views = done.get_future().get();
  ASSERT_TRUE(views);
  ASSERT_EQ(views->size(), 5u);
  for (const auto& view : *views) {
    EXPECT_EQ(view.kind, LockKind::semaphore);
    EXPECT_EQ(
        holders_of(view),
        (std::vector<std::pair<HolderRole, std::string>>{{HolderRole::permit, permit->value()}}));
  }

  EXPECT_EQ(client->inspect("").code(), make_error_code(errc::invalid_argument));
  std::promise<std::error_code> refused;
  client->inspect_async("", [&](Result<std::vector<NodeView>> r) { refused.set_value(r.code()); });
  EXPECT_EQ(refused.get_future().get(), make_error_code(errc::invalid_argument));
}

}  // namespace
}  // namespace redlock

// Reentrancy against five real redis-server processes: the owner object counts its
// holds, the nodes let go only at the last unlock, an unbalanced unlock is refused and
// sends nothing, and a lock whose validity ended cannot be re-entered.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <redlock/redlock.hpp>

#include "support/lock_nodes_fixture.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

class ReentrantLockTest : public test::LockNodesTest {
 protected:
  /// Nodes where `key` holds `value`, read once the last node answered (operations
  /// return when a quorum did).
  static int nodes_holding(const std::string& key, const std::string& value) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    int n = 0;
    for (std::size_t node = 0; node < 5; ++node) n += get(node, key) == value;
    return n;
  }
};

TEST_F(ReentrantLockTest, NestedHoldsReleaseOnlyAtTheLastUnlock) {
  auto client = Client::create(options());
  auto taken = client->try_lock("job", 10s);
  ASSERT_TRUE(taken);
  const std::string value = taken->value();
  ReentrantLock lock(std::move(*taken));
  ASSERT_TRUE(lock.reenter());
  ASSERT_TRUE(lock.reenter());
  EXPECT_EQ(lock.holds(), 3);
  ASSERT_TRUE(lock.unlock());
  ASSERT_TRUE(lock.unlock());
  EXPECT_EQ(lock.holds(), 1);
  EXPECT_EQ(nodes_holding("job", value), 5) << "released before the last unlock";
  EXPECT_EQ(client->try_lock("job", 10s).code(), make_error_code(errc::conflict));
  ASSERT_TRUE(lock.unlock());
  EXPECT_EQ(lock.holds(), 0);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(nodes_holding("job", value), 0);
  EXPECT_TRUE(client->try_lock("job", 10s));
}

TEST_F(ReentrantLockTest, AnUnbalancedUnlockIsRefusedAndCannotReleaseANewHolder) {
  auto client = Client::create(options());
  auto taken = client->try_lock("job", 10s);
  ASSERT_TRUE(taken);
  ReentrantLock lock(std::move(*taken));
  ASSERT_TRUE(lock.unlock());
  auto next_holder = client->try_lock("job", 10s);
  ASSERT_TRUE(next_holder);
  auto extra = lock.unlock();
  ASSERT_FALSE(extra);
  EXPECT_EQ(extra.error(), errc::not_held);
  EXPECT_THAT(extra.error().message(), HasSubstr("more unlock() calls than holds"));
  EXPECT_EQ(nodes_holding("job", next_holder->value()), 5);
  EXPECT_EQ(lock.reenter().code(), make_error_code(errc::not_held)) << "re-entered a released lock";
}

// The last unlock's release cannot reach a quorum (three nodes paused): the hold must
// stay counted, so that unlock() can be called again once the nodes answer, as
// Lock::unlock() can.
TEST_F(ReentrantLockTest, AFailedLastUnlockKeepsItsHoldSoThatUnlockCanBeRetried) {
  auto client = Client::create(options());
  auto taken = client->try_lock("job", 10s);
  ASSERT_TRUE(taken);
  const std::string value = taken->value();
  ReentrantLock lock(std::move(*taken));
  ASSERT_TRUE(lock.reenter());
  ASSERT_TRUE(lock.unlock());
  for (std::size_t node : {0, 1, 2}) cluster()[node].pause();
  auto failed = lock.unlock();
  for (std::size_t node : {0, 1, 2}) cluster()[node].resume();
  ASSERT_FALSE(failed) << "a release no quorum confirmed was reported as done";
  EXPECT_EQ(lock.holds(), 1) << "the hold was counted down although the release failed";
  auto retried = lock.unlock();
  ASSERT_TRUE(retried) << retried.error().message();
  EXPECT_EQ(lock.holds(), 0);
  EXPECT_EQ(nodes_holding("job", value), 0);
  EXPECT_EQ(lock.unlock().code(), make_error_code(errc::not_held));
}

TEST_F(ReentrantLockTest, ALockThatExpiredWhileNestedCannotBeReentered) {
  auto client = Client::create(options());
  auto taken = client->try_lock("job", 300ms);
  ASSERT_TRUE(taken);
  ReentrantLock lock(std::move(*taken));
  ASSERT_TRUE(lock.reenter());
  std::this_thread::sleep_for(350ms);
  auto late = lock.reenter();
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error(), errc::not_held);
  EXPECT_THAT(late.error().message(), HasSubstr("validity is over"));
  EXPECT_EQ(lock.holds(), 2);
  // The owner still leaves as often as it entered; the last leave is harmless.
  EXPECT_TRUE(lock.unlock());
  (void)lock.unlock();
  EXPECT_EQ(lock.holds(), 0);
}

TEST_F(ReentrantLockTest, WorksForEveryKindOfLock) {
  auto client = Client::create(options());
  auto permit = client->acquire_permit("pool", {.permits = 1, .lock = {.ttl = 10s}});
  ASSERT_TRUE(permit);
  ReentrantLock lock(std::move(*permit));
  ASSERT_TRUE(lock.reenter());
  ASSERT_TRUE(lock.unlock());
  // A node may answer after the quorum, so the nodes are read until all have. A release
  // (which returns once a quorum deleted) would keep at least three of them at 0.
  const auto holding_nodes = [&] {
    long long total = 0;
    for (std::size_t node = 0; node < cluster().size(); ++node) {
      total += cluster()[node].command({"ZCARD", "pool"}).integer;
    }
    return total;
  };
  EXPECT_TRUE(eventually([&] { return holding_nodes() == 5; }))
      << "leaving a nested hold released the permit";
  ASSERT_TRUE(lock.unlock());
  EXPECT_TRUE(eventually([&] { return holding_nodes() == 0; }));
}

}  // namespace
}  // namespace redlock

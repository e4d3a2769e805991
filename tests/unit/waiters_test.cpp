// The wake-one-waiter policy of lib/client/engine/waiters.hpp, step by step: which waiter an
// announcement wakes, when a wake is spent, and when it passes on.

#include "client/engine/waiters.hpp"

#include <gtest/gtest.h>

namespace redlock::detail {
namespace {

using Id = WaiterQueue::Id;

/// A queue of waiters 1..n whose first attempts have all failed against a holder.
WaiterQueue idle_queue(Id n) {
  WaiterQueue queue;
  for (Id id = 1; id <= n; ++id) queue.join(id);
  for (Id id = 1; id <= n; ++id) {
    queue.attempt_started(id);
    queue.attempt_failed(id, /*holder_seen=*/true);
  }
  return queue;
}

TEST(WaiterQueue, AnnouncementWakesOnlyTheOldestIdleWaiter) {
  auto queue = idle_queue(3);
  EXPECT_EQ(queue.announce(), 1u);
  queue.attempt_started(1);
  // A second release while 1 attempts goes to the next idle one, not to 1 again.
  EXPECT_EQ(queue.announce(), 2u);
}

TEST(WaiterQueue, WaitersStillOnTheirFirstAttemptAreNotWoken) {
  WaiterQueue queue;
  queue.join(1);
  queue.join(2);
  queue.attempt_started(1);
  auto failed = queue.attempt_failed(1, true);
  EXPECT_FALSE(failed.retry_now);
  // 2 has not attempted yet: its first attempt sees the release anyway.
  EXPECT_EQ(queue.announce(), 1u);
}

TEST(WaiterQueue, WokenWaiterBeatenByANewHolderSpendsTheWake) {
  auto queue = idle_queue(3);
  ASSERT_EQ(queue.announce(), 1u);
  queue.attempt_started(1);
  auto failed = queue.attempt_failed(1, /*holder_seen=*/true);
  EXPECT_FALSE(failed.wake);
  EXPECT_FALSE(failed.retry_now);
  // It kept its place: the next release wakes it first again.
  EXPECT_EQ(queue.announce(), 1u);
}

TEST(WaiterQueue, WokenWaiterFailingWithoutAHolderPassesTheWakeBehindIt) {
  auto queue = idle_queue(3);
  ASSERT_EQ(queue.announce(), 1u);
  queue.attempt_started(1);
  auto failed = queue.attempt_failed(1, /*holder_seen=*/false);
  EXPECT_EQ(failed.wake, 2u);
  queue.attempt_started(2);
  EXPECT_EQ(queue.attempt_failed(2, false).wake, 3u);
  queue.attempt_started(3);
  // The wake travels the queue once; it does not bounce back to 1 at network speed.
  EXPECT_FALSE(queue.attempt_failed(3, false).wake);
}

TEST(WaiterQueue, WaiterThatGivesUpHoldingTheWakePassesIt) {
  auto queue = idle_queue(3);
  ASSERT_EQ(queue.announce(), 1u);
  // Woken after its deadline: it leaves without attempting.
  EXPECT_EQ(queue.leave(1, /*acquired=*/false), 2u);
  // Cancelled while its woken attempt is in flight: the same.
  queue.attempt_started(2);
  EXPECT_EQ(queue.leave(2, false), 3u);
}

TEST(WaiterQueue, WaiterThatLeavesWithoutTheWakePassesNothing) {
  auto queue = idle_queue(3);
  EXPECT_FALSE(queue.leave(2, false));
  ASSERT_EQ(queue.announce(), 1u);
  queue.attempt_started(1);
  EXPECT_FALSE(queue.leave(1, /*acquired=*/true));
  EXPECT_EQ(queue.announce(), 3u);
}

TEST(WaiterQueue, ReleaseDuringInFlightAttemptsIsKeptForTheNextOneToFail) {
  auto queue = idle_queue(2);
  queue.attempt_started(1);
  queue.attempt_started(2);
  EXPECT_FALSE(queue.announce());
  // Both attempts may predate the release: the first to fail tries again at once...
  EXPECT_TRUE(queue.attempt_failed(1, true).retry_now);
  queue.attempt_started(1);
  // ...and that retry took the wake, so the other sleeps.
  EXPECT_FALSE(queue.attempt_failed(2, true).retry_now);
}

TEST(WaiterQueue, AnAttemptStartedAfterTheReleaseTakesTheKeptWake) {
  auto queue = idle_queue(1);
  queue.attempt_started(1);
  EXPECT_FALSE(queue.announce());
  queue.join(2);
  queue.attempt_started(2);
  EXPECT_FALSE(queue.attempt_failed(1, true).retry_now);
}

TEST(WaiterQueue, AcquiringDropsAKeptWake) {
  auto queue = idle_queue(2);
  queue.attempt_started(1);
  queue.attempt_started(2);
  EXPECT_FALSE(queue.announce());
  EXPECT_FALSE(queue.leave(1, /*acquired=*/true));
  // 2 lost to 1, whose own release will announce.
  EXPECT_FALSE(queue.attempt_failed(2, true).retry_now);
}

TEST(WaiterQueue, UnknownWaitersAreIgnored) {
  WaiterQueue queue;
  EXPECT_FALSE(queue.announce());
  queue.attempt_started(7);
  EXPECT_FALSE(queue.attempt_failed(7, false).retry_now);
  EXPECT_FALSE(queue.leave(7, false));
  EXPECT_TRUE(queue.empty());
}

TEST(WaiterQueue, NewcomerBehindOthersWaitsItsTurnInsteadOfAttempting) {
  WaiterQueue queue;
  queue.join(1);
  EXPECT_FALSE(queue.has_waiters_before(1));  // alone: it attempts at once
  queue.attempt_started(1);
  queue.attempt_failed(1, /*holder_seen=*/true);
  queue.join(2);
  EXPECT_TRUE(queue.has_waiters_before(2));
  queue.wait_for_turn(2);
  queue.join(3);
  queue.wait_for_turn(3);
  EXPECT_FALSE(queue.has_waiters_before(99));  // not queued at all
  // Releases wake them in the order they came, one each.
  EXPECT_EQ(queue.announce(), Id{1});
  queue.attempt_started(1);
  queue.leave(1, /*acquired=*/true);
  EXPECT_FALSE(queue.has_waiters_before(2));
  EXPECT_EQ(queue.announce(), Id{2});
  queue.attempt_started(2);
  queue.leave(2, /*acquired=*/true);
  EXPECT_EQ(queue.announce(), Id{3});
}

TEST(WaiterQueue, NewcomerWaitingItsTurnIsWokenBeforeOthersStillOnTheirFirstAttempt) {
  // A waiter that waits for its turn is idle; older waiters whose first attempt is still
  // in flight will see the release themselves.
  WaiterQueue queue;
  queue.join(1);  // attempting
  queue.join(2);
  queue.wait_for_turn(2);
  EXPECT_EQ(queue.announce(), Id{2});
}

}  // namespace
}  // namespace redlock::detail

// The retry schedule: delay +/- jitter from an injected random source, bounded by the
// wait deadline and the attempt limit, and sleeping until a holder's key can expire when
// release notifications will wake the waiter earlier.

#include "core/retry.hpp"

#include <gtest/gtest.h>

#include <deque>

namespace redlock::core {
namespace {

using namespace std::chrono_literals;

// A fake random source that returns scripted values.
RandomSource scripted(std::deque<std::uint64_t> values) {
  auto shared = std::make_shared<std::deque<std::uint64_t>>(std::move(values));
  return [shared] {
    auto value = shared->front();
    shared->pop_front();
    shared->push_back(value);
    return value;
  };
}

const Clock::time_point t0{Clock::duration(0)};

TEST(RetrySchedule, JitterSpansBothSidesOfTheDelay) {
  // span = 2 * 50 + 1 = 101: 0 -> -50, 50 -> 0, 100 -> +50.
  RetrySchedule schedule({100ms, 50ms, 0}, t0 + 10s, scripted({0, 50, 100, 101}));
  EXPECT_EQ(schedule.jittered_delay(), 50ms);
  EXPECT_EQ(schedule.jittered_delay(), 100ms);
  EXPECT_EQ(schedule.jittered_delay(), 150ms);
  EXPECT_EQ(schedule.jittered_delay(), 50ms);  // wraps modulo the span
}

TEST(RetrySchedule, NeverNegative) {
  RetrySchedule schedule({10ms, 50ms, 0}, t0 + 10s, scripted({0}));
  EXPECT_EQ(schedule.jittered_delay(), 0ms);
}

TEST(RetrySchedule, StopsAtTheDeadlineAndCapsTheLastWait) {
  RetrySchedule schedule({100ms, 0ms, 0}, t0 + 250ms, scripted({0}));
  EXPECT_EQ(schedule.next_attempt(1, t0), t0 + 100ms);
  EXPECT_EQ(schedule.next_attempt(2, t0 + 200ms), t0 + 250ms);  // capped, one last try
  EXPECT_EQ(schedule.next_attempt(3, t0 + 250ms), std::nullopt);
}

TEST(RetrySchedule, StopsAfterMaxAttempts) {
  RetrySchedule schedule({10ms, 0ms, 3}, t0 + 10s, scripted({0}));
  EXPECT_TRUE(schedule.next_attempt(1, t0));
  EXPECT_TRUE(schedule.next_attempt(2, t0));
  EXPECT_EQ(schedule.next_attempt(3, t0), std::nullopt);
}

TEST(RetrySchedule, SleepsUntilTheHolderCanExpireWhenNotified) {
  RetrySchedule schedule({100ms, 0ms, 0}, t0 + 10s, scripted({0}));
  // A 2 s holder: no point polling every 100 ms; the release notification wakes us.
  EXPECT_EQ(schedule.next_attempt(1, t0, 2000ms), t0 + 2000ms + 10ms);
  // A holder about to expire: the ordinary delay is longer and wins.
  EXPECT_EQ(schedule.next_attempt(2, t0, 20ms), t0 + 100ms);
  // Capped by the deadline.
  EXPECT_EQ(schedule.next_attempt(3, t0 + 9s, 5000ms), t0 + 10s);
}

TEST(RetrySchedule, SystemRandomVaries) {
  auto random = system_random();
  const auto first = random();
  bool varied = false;
  for (int i = 0; i < 8 && !varied; ++i) varied = random() != first;
  EXPECT_TRUE(varied);
}

TEST(BackoffRetry, WithinTwoNodeTimeoutsDoublingPerRefusalUpToSixDoublings) {
  const auto node_timeout = 50ms;
  const std::uint64_t largest = ~std::uint64_t{0};
  EXPECT_EQ(backoff_retry(1, node_timeout, 0), 1ms) << "never at once: a busy loop";
  for (int streak = 1; streak <= 6; ++streak) {
    std::chrono::milliseconds longest{0};
    for (std::uint64_t r = 0; r < 4000; ++r) {
      longest = std::max(longest, backoff_retry(streak, node_timeout, r));
    }
    const auto span = 2 * node_timeout * (1 << (streak - 1));
    EXPECT_LE(longest, span + 1ms) << "streak " << streak;
    EXPECT_GT(longest, span / 2) << "streak " << streak << ": the span did not double";
  }
  // Capped: a release that announced but failed elsewhere is polled at most every 3.2 s.
  EXPECT_LE(backoff_retry(40, node_timeout, largest), 3201ms);
  EXPECT_LE(backoff_retry(0, node_timeout, largest), 101ms);
}

// The release that announced is in flight to the other nodes: the first refusal by its
// holder looks again once it can have landed, not after a random couple of node timeouts
// (the key would sit free meanwhile); a refusal that repeats backs off.
TEST(LeavingHolderRetry, FirstAfterOneRoundTripThenBackingOff) {
  const auto node_timeout = 50ms;
  for (std::uint64_t r = 0; r < 100; ++r) {
    const auto first = leaving_holder_retry(1, node_timeout, 2ms, r);
    EXPECT_GE(first, 2ms);
    EXPECT_LE(first, 3ms);
    EXPECT_EQ(leaving_holder_retry(2, node_timeout, 2ms, r), backoff_retry(1, node_timeout, r));
    EXPECT_EQ(leaving_holder_retry(6, node_timeout, 2ms, r), backoff_retry(5, node_timeout, r));
  }
  EXPECT_EQ(leaving_holder_retry(1, node_timeout, 0ms, 0), 1ms) << "never at once: a busy loop";
  EXPECT_EQ(leaving_holder_retry(1, node_timeout, 900ms, 0), node_timeout);
}

TEST(LeavingHolderRetry, TheKeptStreakReachesTheLongestBackOff) {
  const auto node_timeout = 50ms;
  const std::uint64_t largest = ~std::uint64_t{0};
  int streak = 0;
  for (int failure = 0; failure < 20; ++failure) streak = next_streak(streak);
  EXPECT_EQ(leaving_holder_retry(streak, node_timeout, 2ms, largest),
            backoff_retry(6, node_timeout, largest))
      << "a holder that announced and never left is looked at again at the slowest pace";
  EXPECT_GE(split_vote_retry(streak, node_timeout, 2ms, false, largest),
            split_vote_retry(6, node_timeout, 2ms, false, largest));
}

TEST(SplitVoteRetry, AfterTheFirstSlotWithinAQuarterNodeTimeoutDoublingPerSplitUpToSix) {
  const auto node_timeout = 40ms;
  const auto round_trip = 3ms;
  const std::uint64_t largest = ~std::uint64_t{0};
  EXPECT_EQ(split_vote_retry(1, node_timeout, round_trip, false, 0), 4ms)
      << "after the first contender's slot, never in it";
  for (int streak = 1; streak <= 6; ++streak) {
    std::chrono::milliseconds longest{0};
    for (std::uint64_t r = 0; r < 4000; ++r) {
      longest = std::max(longest, split_vote_retry(streak, node_timeout, round_trip, false, r));
    }
    EXPECT_EQ(longest, round_trip + 10ms * (1 << (streak - 1)) + 1ms) << "streak " << streak;
  }
  EXPECT_EQ(split_vote_retry(40, node_timeout, round_trip, false, 319), 323ms)
      << "capped at six doublings";
  EXPECT_LE(split_vote_retry(1, 0ms, 0ms, false, largest), 4ms) << "at least a 2 ms span";
}

// Contenders woken together split the nodes; the one whose value orders first tries again
// once the others' deletes can have landed, before any of them, so the key is not left
// free for a random delay.
TEST(SplitVoteRetry, TheFirstContenderTriesAgainAfterOneRoundTrip) {
  const auto node_timeout = 40ms;
  for (std::uint64_t r = 0; r < 100; ++r) {
    EXPECT_EQ(split_vote_retry(1, node_timeout, 3ms, true, r), 3ms);
    EXPECT_GT(split_vote_retry(1, node_timeout, 3ms, false, r), 3ms);
  }
  EXPECT_EQ(split_vote_retry(1, node_timeout, 0ms, true, 7), 1ms) << "never at once: a busy loop";
  EXPECT_EQ(split_vote_retry(1, node_timeout, 500ms, true, 7), node_timeout)
      << "a round that ran into its timeout";
  // A split that lasts is not a collision of contenders: no order, everyone backs off.
  std::chrono::milliseconds longest{0};
  for (std::uint64_t r = 0; r < 4000; ++r) {
    longest = std::max(longest, split_vote_retry(2, node_timeout, 3ms, true, r));
  }
  EXPECT_EQ(longest, 3ms + 20ms + 1ms);
}

// A split vote: our grants are deleted at once, and the nodes that refused free up as
// their entries expire. The next attempt is due when the entries still standing leave a
// quorum free, one millisecond after the last of those that must go.
TEST(SplitClearsIn, WhenEnoughRefusingEntriesExpireToLeaveAQuorumFree) {
  // 5 nodes, quorum 3: two granted us, three refused with 900, 300 and 2000 ms left:
  // one more node must free up, the soonest at 300 ms.
  EXPECT_EQ(split_clears_in(3, 2, {900ms, 300ms, 2000ms}), 301ms);
  // None granted: three of the refusals must expire, the third soonest at 2000 ms.
  EXPECT_EQ(split_clears_in(3, 0, {900ms, 300ms, 2000ms, 2500ms, 100ms}), 901ms);
  // An entry about to go is due at once, but never in the same millisecond (a busy loop).
  EXPECT_EQ(split_clears_in(3, 2, {0ms, 5ms}), 1ms);
}

TEST(SplitClearsIn, UnknownWhenTheKnownEntriesCannotFreeAQuorum) {
  // A node that failed or timed out may hold anything: it is never counted free.
  EXPECT_EQ(split_clears_in(3, 1, {400ms}), std::nullopt);
  // An entry without a TTL (-1: persistent, or a TTL that was not read) never expires.
  EXPECT_EQ(split_clears_in(3, 2, {-1ms}), std::nullopt);
  EXPECT_EQ(split_clears_in(3, 1, {-1ms, 700ms, 200ms}), 701ms);
  // Already a quorum free (a decision by timing, not by the entries): nothing to wait for.
  EXPECT_EQ(split_clears_in(3, 3, {500ms}), 1ms);
}

}  // namespace
}  // namespace redlock::core

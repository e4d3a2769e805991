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

TEST(LeavingHolderRetry, WithinTwoNodeTimeoutsDoublingPerRefusalUpToSixDoublings) {
  const auto node_timeout = 50ms;
  const std::uint64_t largest = ~std::uint64_t{0};
  EXPECT_EQ(leaving_holder_retry(1, node_timeout, 0), 1ms) << "never at once: a busy loop";
  for (int streak = 1; streak <= 6; ++streak) {
    std::chrono::milliseconds longest{0};
    for (std::uint64_t r = 0; r < 4000; ++r) {
      longest = std::max(longest, leaving_holder_retry(streak, node_timeout, r));
    }
    const auto span = 2 * node_timeout * (1 << (streak - 1));
    EXPECT_LE(longest, span + 1ms) << "streak " << streak;
    EXPECT_GT(longest, span / 2) << "streak " << streak << ": the span did not double";
  }
  // Capped: a release that announced but failed elsewhere is polled at most every 3.2 s.
  EXPECT_LE(leaving_holder_retry(40, node_timeout, largest), 3201ms);
  EXPECT_LE(leaving_holder_retry(0, node_timeout, largest), 101ms);
}

}  // namespace
}  // namespace redlock::core

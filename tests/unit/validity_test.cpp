// Validity = ttl - elapsed - (ttl * drift_factor + margin), on the monotonic clock, and
// never rounded in the caller's favour.

#include "core/validity.hpp"

#include <gtest/gtest.h>

namespace redlock::core {
namespace {

using namespace std::chrono_literals;

TEST(Validity, DriftIsProportionalPlusMargin) {
  EXPECT_EQ(drift(10'000ms, {0.01, 2ms}), 102ms);
  EXPECT_EQ(drift(1'000ms, {0.01, 2ms}), 12ms);
  EXPECT_EQ(drift(1'000ms, {0.0, 0ms}), 0ms);
}

TEST(Validity, DriftRoundsUpToTheMicrosecond) {
  // 333 ms * 0.01 = 3.33 ms = 3330 us exactly; 1 ms * 0.0015 = 1.5 us -> 2 us.
  EXPECT_EQ(drift(333ms, {0.01, 0ms}), 3330us);
  EXPECT_EQ(drift(1ms, {0.0015, 0ms}), 2us);
}

TEST(Validity, ValidUntilCountsFromTheAttemptStart) {
  const Clock::time_point start{Clock::duration(1'000'000'000)};
  const auto until = valid_until(start, 10'000ms, {0.01, 2ms});
  EXPECT_EQ(until - start, 10'000ms - 102ms);
  // 40 ms into the lock, 9858 ms are left.
  EXPECT_EQ(validity_left(until, start + 40ms), 9858ms);
}

TEST(Validity, EdgesAtZero) {
  const Clock::time_point start{Clock::duration(5'000'000'000)};
  const auto until = valid_until(start, 100ms, {0.01, 2ms});  // 100 - 3 = 97 ms
  EXPECT_EQ(validity_left(until, start + 96ms), 1ms);
  EXPECT_EQ(validity_left(until, start + 97ms), 0ms);
  // 1 us short of a whole millisecond is not a millisecond of validity.
  EXPECT_EQ(validity_left(until, start + 96ms + 1us), 0ms);
  EXPECT_LT(validity_left(until, start + 97ms + 1us), 0ms);
}

TEST(Validity, TtlSmallerThanDriftLeavesNothing) {
  const Clock::time_point start{};
  const auto until = valid_until(start, 2ms, {0.01, 2ms});
  EXPECT_LE(validity_left(until, start), 0ms);
}

}  // namespace
}  // namespace redlock::core

// The one retry rule (core/backoff.hpp) and every policy built on it: for streaks from 0
// to well past saturation and for the extreme and middle random numbers, no delay is
// negative, none leaves its span, and every span stops growing at its cap.

#include "core/backoff.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <vector>

#include "core/acquisition.hpp"
#include "core/retry.hpp"

namespace redlock::core {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

constexpr std::uint64_t largest = std::numeric_limits<std::uint64_t>::max();
const std::vector<std::uint64_t> extremes{0, 1, largest / 2, largest - 1, largest};
constexpr int past_saturation = longest_retry_streak + 6;

// Every streak (0 .. past saturation) with every extreme random number.
template <typename Check>
void for_each_draw(Check check) {
  for (int streak = 0; streak <= past_saturation; ++streak) {
    for (std::uint64_t random : extremes) check(streak, random);
  }
}

// The smallest streak from which the span stays at `longest`.
int saturating_streak(const Backoff& policy) {
  int streak = 1;
  while (policy.span(streak) < policy.longest) ++streak;
  return streak;
}

TEST(NextStreak, CountsUpAndStaysAtTheLongestStreak) {
  int streak = 0;
  for (int failure = 1; failure <= longest_retry_streak; ++failure) {
    streak = next_streak(streak);
    EXPECT_EQ(streak, failure);
  }
  for (int failure = 0; failure < 100; ++failure) streak = next_streak(streak);
  EXPECT_EQ(streak, longest_retry_streak);
}

TEST(Backoff, SpanDoublesFromFirstToLongest) {
  const Backoff policy{10ms, 1000ms, Jitter::full, {}, {}};
  EXPECT_EQ(policy.span(0), 10ms) << "no failure yet: the first span";
  EXPECT_EQ(policy.span(1), 10ms);
  EXPECT_EQ(policy.span(2), 20ms);
  EXPECT_EQ(policy.span(7), 640ms);
  EXPECT_EQ(policy.span(8), 1000ms);
  EXPECT_EQ(policy.span(longest_retry_streak), 1000ms);
}

TEST(Backoff, EveryCapIsReachedWithinTheLongestStreak) {
  // 1 ms doubled toward the largest cap a count of milliseconds holds, without overflow.
  const Backoff widest{1ms, milliseconds::max(), Jitter::full, {}, {}};
  EXPECT_EQ(widest.span(longest_retry_streak), milliseconds::max());
  EXPECT_GT(widest.span(longest_retry_streak - 1), 0ms);
  for_each_draw([&](int streak, std::uint64_t random) {
    EXPECT_GE(widest.delay(streak, random), 0ms) << streak << " " << random;
  });
}

TEST(Backoff, FromNothingTheSpanGrowsFromAMillisecond) {
  const Backoff policy{0ms, 8ms, Jitter::full, {}, {}};
  EXPECT_EQ(policy.span(1), 0ms);
  EXPECT_EQ(policy.span(2), 1ms);
  EXPECT_EQ(policy.span(3), 2ms);
  EXPECT_EQ(policy.span(6), 8ms);
  EXPECT_EQ(policy.delay(1, largest), 0ms);
}

TEST(Backoff, FullJitterSpansZeroToTheSpan) {
  const Backoff policy{100ms, 100ms, Jitter::full, {}, {}};
  EXPECT_EQ(policy.delay(1, 0), 0ms);
  EXPECT_EQ(policy.delay(1, 100), 100ms);
  EXPECT_EQ(policy.delay(1, 101), 0ms) << "wraps modulo the span";
}

TEST(Backoff, UpperHalfNeverComesSoonerThanHalfTheSpan) {
  const Backoff policy{100ms, 100ms, Jitter::upper_half, {}, {}};
  EXPECT_EQ(policy.delay(1, 0), 50ms);
  EXPECT_EQ(policy.delay(1, 50), 100ms);
}

TEST(Backoff, AboveNeverComesSoonerThanTheSpan) {
  const Backoff policy{100ms, 100ms, Jitter::above, {}, {}};
  EXPECT_EQ(policy.delay(1, 0), 100ms);
  EXPECT_EQ(policy.delay(1, 50), 150ms);
}

TEST(Backoff, NeverNegativeNorBelowItsFloor) {
  const Backoff below{10ms, 10ms, Jitter::full, -50ms, {}};
  const Backoff floored{10ms, 10ms, Jitter::full, -50ms, 3ms};
  for_each_draw([&](int streak, std::uint64_t random) {
    EXPECT_EQ(below.delay(streak, random), 0ms);
    EXPECT_EQ(floored.delay(streak, random), 3ms);
  });
  const Backoff negative{-5ms, -1ms, Jitter::full, {}, {}};
  for_each_draw(
      [&](int streak, std::uint64_t random) { EXPECT_EQ(negative.delay(streak, random), 0ms); });
}

TEST(Backoff, AroundSpansBothSidesOfTheDelay) {
  const auto policy = Backoff::around(100ms, 50ms);
  EXPECT_EQ(policy.delay(1, 0), 50ms);
  EXPECT_EQ(policy.delay(1, 50), 100ms);
  EXPECT_EQ(policy.delay(1, 100), 150ms);
  for_each_draw([&](int streak, std::uint64_t random) {
    const auto delay = policy.delay(streak, random);
    EXPECT_GE(delay, 50ms);
    EXPECT_LE(delay, 150ms);
  });
  EXPECT_EQ(Backoff::around(10ms, 50ms).delay(1, 0), 0ms) << "never negative";
  EXPECT_EQ(Backoff::around(10ms, 0ms).delay(7, largest), 10ms) << "no jitter, no growth";
}

// Each policy of the library over every streak and random extreme: within [lowest,
// highest], and the same delay for every streak from its saturating one on.
struct Case {
  const char* name;
  Backoff policy;
  milliseconds lowest;
  milliseconds highest;
};

TEST(Backoff, EveryPolicyStaysInItsBoundsAndSaturates) {
  const std::vector<Case> cases{
      // The reconnect (net/connection.cpp), with the defaults: full jitter over a span
      // from reconnect_min doubling to reconnect_max.
      {"reconnect", {10ms, 1000ms, Jitter::full, {}, {}}, 0ms, 1000ms},
      {"reconnect, min = max", {50ms, 50ms, Jitter::full, {}, {}}, 0ms, 50ms},
      // A release sent again (member/node.cpp): every 200 ms, whatever the try.
      {"release re-send", Backoff::fixed(200ms), 200ms, 200ms},
      // The acquisition's steady retry: retry_delay +/- retry_jitter.
      {"retry delay", Backoff::around(100ms, 50ms), 50ms, 150ms},
      // A leader's record read again after a release (api/election.cpp).
      {"election follow-up", {5ms, 1000ms, Jitter::none, {}, {}}, 5ms, 1000ms},
  };
  for (const auto& one : cases) {
    const int saturated = saturating_streak(one.policy);
    EXPECT_LE(saturated, longest_retry_streak) << one.name;
    for_each_draw([&](int streak, std::uint64_t random) {
      const auto delay = one.policy.delay(streak, random);
      EXPECT_GE(delay, one.lowest) << one.name << " streak " << streak << " random " << random;
      EXPECT_LE(delay, one.highest) << one.name << " streak " << streak << " random " << random;
      EXPECT_LE(one.policy.span(streak), one.policy.longest) << one.name;
      if (streak >= saturated) {
        EXPECT_EQ(delay, one.policy.delay(saturated, random)) << one.name << " " << streak;
      }
    });
  }
}

TEST(Backoff, ReconnectWaitsMatchTheDoublingOfBefore) {
  // The connection's own rule before the module: a span from reconnect_min, doubled (from
  // at least 1 ms) after each failure up to reconnect_max, the wait uniform in [0, span].
  for (const auto& [low, high] :
       {std::pair{10ms, 1000ms}, std::pair{1ms, 3ms}, std::pair{7ms, 7ms}, std::pair{0ms, 100ms}}) {
    const Backoff reconnect{low, high, Jitter::full, {}, {}};
    auto before = low;
    for (int streak = 1; streak <= past_saturation; ++streak) {
      EXPECT_EQ(reconnect.span(streak), before) << low.count() << "-" << high.count();
      const auto width = static_cast<std::uint64_t>(before.count()) + 1;
      EXPECT_EQ(reconnect.delay(streak, largest), milliseconds(largest % width));
      before = std::min(high, std::max(before * 2, 1ms));
    }
  }
}

TEST(Backoff, ElectionFollowUpsNeverWaitPastEvery) {
  // A follow-up is due while its span is below `every`; once it reaches it, the reads go
  // back to `every`. With `every` below the first follow-up, the first waits `every`.
  const Backoff short_every{5ms, 3ms, Jitter::none, {}, {}};
  EXPECT_EQ(short_every.delay(1, 0), 3ms);
  const Backoff follow_ups{5ms, 100ms, Jitter::none, {}, {}};
  std::vector<milliseconds> waits;
  for (int streak = 1; follow_ups.span(streak) < 100ms; streak = next_streak(streak)) {
    waits.push_back(follow_ups.delay(streak, largest));
  }
  EXPECT_EQ(waits, (std::vector<milliseconds>{5ms, 10ms, 20ms, 40ms, 80ms}));
}

TEST(UnreachableRetry, EveryStreakAndRandomWithinHalfTheSpanAndTheCap) {
  for (const RetryPolicy policy : {RetryPolicy{100ms, 50ms, 0}, RetryPolicy{1ms, 0ms, 0},
                                   RetryPolicy{0ms, 0ms, 0}, RetryPolicy{5s, 0ms, 0}}) {
    const auto base = std::max(policy.delay, 1ms);
    const auto cap = std::max(base, 1000ms);
    for_each_draw([&](int streak, std::uint64_t random) {
      const auto delay = unreachable_retry(streak, policy, random);
      EXPECT_GE(delay, std::max(base / 2, 1ms)) << streak;
      EXPECT_LE(delay, cap) << streak;
    });
    // 1 ms doubles ten times before it reaches a second: the saturation of before (a
    // streak of 64) is kept, not cut to the doubling policies' six doublings.
    EXPECT_EQ(unreachable_retry(longest_retry_streak, policy, 0), std::max(cap / 2, 1ms));
  }
  EXPECT_EQ(unreachable_retry(10, {1ms, 0ms, 0}, 0), 256ms);
  EXPECT_EQ(unreachable_retry(11, {1ms, 0ms, 0}, 0), 500ms);
}

TEST(BackoffRetry, EveryStreakAndRandomWithinItsSpan) {
  for (const auto node_timeout : {0ms, 1ms, 50ms, 1000ms}) {
    const auto longest = 32 * 2 * node_timeout + 1ms;
    for_each_draw([&](int streak, std::uint64_t random) {
      const auto delay = backoff_retry(streak, node_timeout, random);
      EXPECT_GE(delay, 1ms) << "never at once";
      EXPECT_LE(delay, longest);
      if (streak >= 6) {
        EXPECT_EQ(delay, backoff_retry(6, node_timeout, random));
      }
    });
  }
}

TEST(LeavingHolderRetry, EveryStreakAndRandomWithinItsSpan) {
  const auto node_timeout = 50ms;
  for_each_draw([&](int streak, std::uint64_t random) {
    const auto delay = leaving_holder_retry(streak, node_timeout, 2ms, random);
    if (streak <= 1) {
      EXPECT_GE(delay, 2ms);
      EXPECT_LE(delay, 3ms);
    } else {
      EXPECT_EQ(delay, backoff_retry(streak - 1, node_timeout, random));
    }
  });
}

TEST(SplitVoteRetry, EveryStreakAndRandomWithinItsSpan) {
  const auto node_timeout = 50ms;
  for_each_draw([&](int streak, std::uint64_t random) {
    const auto delay = split_vote_retry(streak, node_timeout, 3ms, false, random);
    EXPECT_GE(delay, 4ms);
    EXPECT_LE(delay, 3ms + 32 * 12ms + 1ms);
    if (streak >= 6) {
      EXPECT_EQ(delay, split_vote_retry(6, node_timeout, 3ms, false, random));
    }
    const auto first = split_vote_retry(streak, node_timeout, 3ms, true, random);
    if (streak <= 1) {
      EXPECT_EQ(first, 3ms);
    }
  });
}

TEST(HalfwayTo, HalvesTheTimeLeftUpToTheLongest) {
  EXPECT_EQ(halfway_to(1000ms, 300ms), Clock::duration(300ms));
  EXPECT_EQ(halfway_to(400ms, 300ms), Clock::duration(200ms));
  EXPECT_EQ(halfway_to(1ns, 300ms), Clock::duration(0));
  EXPECT_EQ(halfway_to(-10ms, 300ms), Clock::duration(0)) << "never negative";
  // Each failure with nothing else changing halves what is left: ever sooner retries.
  Clock::duration left = 1000ms;
  for (int failure = 0; failure < 10; ++failure) {
    const auto wait = halfway_to(left, 1s);
    EXPECT_LT(wait, left);
    left -= wait;
  }
  EXPECT_GT(left, Clock::duration(0)) << "one more try always fits";
}

}  // namespace
}  // namespace redlock::core

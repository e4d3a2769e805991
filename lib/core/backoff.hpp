#pragma once
// How long a retry waits: the one rule behind every retry of the library (an acquire
// attempt, a reconnect, a release sent again, a leader's record read again). A failure of
// one kind starts a streak, and each consecutive failure of that kind lengthens it by one;
// the span a delay is drawn from starts at `first` and doubles per streak up to
// `longest`, where it stays, so that a node or a quorum that stays away costs a few
// commands, not a stream of them. Where in the span the delay falls comes from a uniform
// 64-bit number the caller draws from its injected RandomSource (core/random_source.hpp):
// contenders that failed together then do not retry in lockstep, and tests script it. A
// fixed interval is the policy whose span never grows and is not jittered.

#include <chrono>
#include <cstdint>

#include "core/validity.hpp"

namespace redlock::core {

/// How far any streak counts: one more failure leaves it there. Past it no span grows,
/// whatever the policy: `first` (at least 1 ms) doubled 63 times is past every cap a
/// count of milliseconds can hold.
inline constexpr int longest_retry_streak = 64;

/// `streak` after one more consecutive failure of its kind.
constexpr int next_streak(int streak) noexcept {
  return streak < longest_retry_streak ? streak + 1 : longest_retry_streak;
}

/// Where in the span a delay falls.
enum class Jitter {
  none,        ///< the span itself: a fixed interval, or a plain doubling
  full,        ///< uniformly in [0, span]: the widest spread
  upper_half,  ///< span / 2 plus uniformly up to span / 2 again: never sooner than half
  above,       ///< the span plus uniformly up to half of it: never sooner than the span
};

struct Backoff {
  /// The span at a streak's first failure (a streak of 0 or 1).
  std::chrono::milliseconds first{0};
  /// The span no streak grows past. Each failure doubles it (from 1 ms when `first` is 0).
  std::chrono::milliseconds longest{0};
  Jitter jitter = Jitter::full;
  /// Added to every delay: a wait that must come first (a round trip) or a floor of 1 ms
  /// that is not a busy loop. May be negative (around()).
  std::chrono::milliseconds after{0};
  /// No delay is shorter, nor ever negative.
  std::chrono::milliseconds at_least{0};

  /// The same wait every time.
  static constexpr Backoff fixed(std::chrono::milliseconds every) noexcept {
    return {every, every, Jitter::none, {}, {}};
  }

  /// `delay` plus or minus up to `jitter`, uniformly, whatever the streak; never negative.
  static constexpr Backoff around(std::chrono::milliseconds delay,
                                  std::chrono::milliseconds jitter) noexcept {
    return {2 * jitter, 2 * jitter, Jitter::full, delay - jitter, {}};
  }

  /// The span after `streak` consecutive failures, saturated at `longest`.
  std::chrono::milliseconds span(int streak) const noexcept;

  /// The wait after `streak` consecutive failures, with `random` a uniform 64-bit number
  /// (ignored by Jitter::none).
  std::chrono::milliseconds delay(int streak, std::uint64_t random) const noexcept;
};

/// A retry against a deadline rather than after a streak: the next try comes halfway to
/// the last moment one can start (`last_start_in` from now) and no later than `longest`,
/// so that failures retry ever sooner as the deadline nears and one more try always fits.
/// Never negative.
Clock::duration halfway_to(Clock::duration last_start_in, Clock::duration longest) noexcept;

}  // namespace redlock::core

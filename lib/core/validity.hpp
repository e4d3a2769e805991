#pragma once
// Validity and clock drift (step 4 of the algorithm). A lock is usable only until the
// earliest moment any node may have let it expire, minus an allowance for clocks that
// run at different rates: valid_until = start + ttl - (ttl * drift_factor + margin).
// Measuring from the attempt's start (not from the last reply) charges the caller for
// every microsecond the requests spent on the wire.

#include <chrono>

namespace redlock::core {

using Clock = std::chrono::steady_clock;

struct DriftPolicy {
  double factor = 0.01;
  std::chrono::milliseconds margin{2};
};

/// The drift allowance for `ttl`, rounded up to whole microseconds so that rounding can
/// only shorten the validity.
std::chrono::microseconds drift(std::chrono::milliseconds ttl, const DriftPolicy& policy);

/// The instant the caller must stop acting as the owner of a lock whose acquire (or
/// extend) round started at `start`.
Clock::time_point valid_until(Clock::time_point start, std::chrono::milliseconds ttl,
                              const DriftPolicy& policy);

/// Validity left at `now`: ttl - elapsed - drift, truncated to whole milliseconds
/// toward negative infinity (never rounded up). Negative once expired.
std::chrono::milliseconds validity_left(Clock::time_point valid_until, Clock::time_point now);

/// Whether a lock valid until `valid_until` may still be acted on at `now`: at least a
/// whole millisecond left, so that validity_left (what Lock::validity() reports) is 0
/// exactly when it may not.
bool still_valid(Clock::time_point valid_until, Clock::time_point now);

}  // namespace redlock::core

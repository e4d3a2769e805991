#include "core/backoff.hpp"

#include <algorithm>

namespace redlock::core {

using std::chrono::milliseconds;

milliseconds Backoff::span(int streak) const noexcept {
  const auto cap = std::max<std::int64_t>(longest.count(), 0);
  auto span = std::min(std::max<std::int64_t>(first.count(), 0), cap);
  // A loop, not a shift: it stops at the cap, so no doubling overflows, and a streak
  // counts to longest_retry_streak at most.
  for (int failure = 1; failure < streak && span < cap; ++failure) {
    span = span > cap / 2 ? cap : std::max<std::int64_t>(2 * span, 1);
  }
  return milliseconds(std::min(span, cap));
}

milliseconds Backoff::delay(int streak, std::uint64_t random) const noexcept {
  const auto width = static_cast<std::uint64_t>(span(streak).count());
  std::uint64_t drawn = 0;
  switch (jitter) {
    case Jitter::none:
      drawn = width;
      break;
    case Jitter::full:
      drawn = random % (width + 1);
      break;
    case Jitter::upper_half:
      drawn = width / 2 + random % (width / 2 + 1);
      break;
    case Jitter::above:
      drawn = width + random % (width / 2 + 1);
      break;
  }
  const auto wait = after.count() + static_cast<std::int64_t>(drawn);
  return milliseconds(std::max({wait, at_least.count(), std::int64_t{0}}));
}

Clock::duration halfway_to(Clock::duration last_start_in, Clock::duration longest) noexcept {
  return std::max(std::min(longest, last_start_in / 2), Clock::duration::zero());
}

}  // namespace redlock::core

#include "core/validity.hpp"

#include <cmath>

namespace redlock::core {

std::chrono::microseconds drift(std::chrono::milliseconds ttl, const DriftPolicy& policy) {
  const double proportional_us =
      std::ceil(static_cast<double>(ttl.count()) * 1000.0 * policy.factor);
  return std::chrono::microseconds(static_cast<std::chrono::microseconds::rep>(proportional_us)) +
         policy.margin;
}

Clock::time_point valid_until(Clock::time_point start, std::chrono::milliseconds ttl,
                              const DriftPolicy& policy) {
  return start + ttl - drift(ttl, policy);
}

std::chrono::milliseconds validity_left(Clock::time_point valid_until, Clock::time_point now) {
  return std::chrono::floor<std::chrono::milliseconds>(valid_until - now);
}

bool still_valid(Clock::time_point valid_until, Clock::time_point now) {
  return valid_until > now && valid_until - now >= std::chrono::milliseconds(1);
}

}  // namespace redlock::core

#include "client/kinds/hold_limit.hpp"

#include <algorithm>

#include "client/util/messages.hpp"

namespace redlock::detail {

using std::chrono::milliseconds;

HoldLimit HoldLimit::of(const LockOptions& options, core::Clock::time_point acquired) {
  HoldLimit limit;
  if (options.max_hold.count() > 0) limit.until = acquired + options.max_hold;
  if (options.max_extensions > 0) limit.extensions_left = options.max_extensions;
  return limit;
}

std::optional<std::string> HoldLimit::refuses(core::Clock::time_point now, milliseconds ttl) const {
  if (extensions_left == 0) return std::string("max_extensions reached");
  // Compared as durations from now: `until` may be time_point::max(), which now + ttl
  // must not be added to.
  if (until - now < ttl) return std::string("max_hold reached");
  return std::nullopt;
}

Error hold_limit_error(const std::string& resource, const std::string& reason,
                       core::Clock::time_point now, core::Clock::time_point valid_until) {
  const auto left =
      std::max<long long>(std::chrono::floor<milliseconds>(valid_until - now).count(), 0);
  return Error(make_error_code(errc::hold_limit_reached),
               "lock " + quote_key(resource) + " no longer extended: " + reason + " (" +
                   std::to_string(left) + " ms of validity left)");
}

}  // namespace redlock::detail

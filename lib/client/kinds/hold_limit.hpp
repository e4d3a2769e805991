#pragma once
// The cap on auto-extension (LockOptions::max_hold and max_extensions): decided before
// each watchdog round, on the loop thread.

#include <chrono>
#include <optional>
#include <string>

#include <redlock/error.hpp>
#include <redlock/options.hpp>

#include "core/validity.hpp"

namespace redlock::detail {

struct HoldLimit {
  /// No extension may move the keys' expiry past this point (max when unlimited).
  core::Clock::time_point until = core::Clock::time_point::max();
  /// Extensions the watchdog may still make; negative = unlimited.
  int extensions_left = -1;

  /// The limit of a lock acquired by the round that started at `acquired`.
  static HoldLimit of(const LockOptions& options, core::Clock::time_point acquired);

  /// Why an extension to `ttl` starting at `now` is not allowed, or nullopt when it is.
  std::optional<std::string> refuses(core::Clock::time_point now,
                                     std::chrono::milliseconds ttl) const;
};

/// errc::hold_limit_reached for lock `resource`, its message naming `reason` and the
/// validity left at `now` before `valid_until`.
Error hold_limit_error(const std::string& resource, const std::string& reason,
                       core::Clock::time_point now, core::Clock::time_point valid_until);

}  // namespace redlock::detail

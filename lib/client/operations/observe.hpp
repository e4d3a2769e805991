#pragma once
// The library's side of redlock::Observer and the log sink: one function per event,
// called with one line at each place the event happens. Each returns at once, building
// nothing, when the client has neither an observer nor a log sink, so an unobserved
// client pays one branch per event.

#include <string_view>

#include <redlock/observer.hpp>
#include <redlock/options.hpp>

#include "core/validity.hpp"
#include "member/member_events.hpp"

namespace redlock::detail {

class Engine;
struct RoundResult;

/// An acquire attempt ended with `round` (of a lock() called at `started`); `error` is
/// empty for an acquired lock.
void observe_attempt(const Engine& engine, std::string_view key, int attempt,
                     const RoundResult& round, std::error_code error,
                     core::Clock::time_point started);
/// A lock() call (made at `started`) ends after `attempts` attempts; `error` is empty
/// when it acquired.
void observe_acquire(const Engine& engine, std::string_view key, int attempts,
                     std::error_code error, core::Clock::time_point started);
/// A waiting lock() (started at `started`) wakes for another attempt.
void observe_wake(const Engine& engine, std::string_view key, WakeCause cause,
                  core::Clock::time_point started);
/// An extend or release round was decided.
void observe_lock(const Engine& engine, std::string_view key, LockOperation operation,
                  const RoundResult& round);
/// The watchdog extended (error null) or lost the lock.
void observe_watchdog(const Engine& engine, std::string_view key, const Error* lost,
                      core::Clock::time_point valid_until);

}  // namespace redlock::detail

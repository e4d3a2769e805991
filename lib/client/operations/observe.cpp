#include "client/operations/observe.hpp"

#include <cstdio>
#include <memory>
#include <string>

#include "client/engine/engine.hpp"
#include "client/operations/operations.hpp"
#include "client/rounds/round.hpp"

namespace redlock {

Observer::~Observer() = default;
void Observer::on_attempt(const AttemptEvent&) {}
void Observer::on_acquire(const AcquireEvent&) {}
void Observer::on_wake(const WakeEvent&) {}
void Observer::on_lock(const LockEvent&) {}
void Observer::on_watchdog(const WatchdogEvent&) {}
void Observer::on_node(const NodeEvent&) {}

const char* to_string(AttemptOutcome outcome) noexcept {
  switch (outcome) {
    case AttemptOutcome::acquired:
      return "acquired";
    case AttemptOutcome::conflict:
      return "conflict";
    case AttemptOutcome::unreachable:
      return "unreachable";
    case AttemptOutcome::expired:
      return "expired";
    case AttemptOutcome::cancelled:
      return "cancelled";
  }
  return "unknown";
}

const char* to_string(WakeCause cause) noexcept {
  return cause == WakeCause::announcement ? "announcement" : "timer";
}

const char* to_string(LockOperation operation) noexcept {
  return operation == LockOperation::extend ? "extend" : "release";
}

const char* to_string(LogLevel level) noexcept {
  switch (level) {
    case LogLevel::debug:
      return "debug";
    case LogLevel::info:
      return "info";
    case LogLevel::warning:
      return "warning";
    case LogLevel::error:
      return "error";
  }
  return "unknown";
}

namespace detail {

namespace {

using core::Clock;
using std::chrono::microseconds;

microseconds since(Clock::time_point start, Clock::time_point now) {
  return std::chrono::duration_cast<microseconds>(now - start);
}

std::string ms(microseconds duration) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", static_cast<double>(duration.count()) / 1000.0);
  return text;
}

bool logs(const Options& options, LogLevel level) {
  return options.log && level >= options.log_level;
}

void log(const Options& options, LogLevel level, const std::string& line) {
  if (logs(options, level)) options.log(level, line);
}

AttemptOutcome outcome_of(std::error_code error) {
  if (!error) return AttemptOutcome::acquired;
  if (error == errc::conflict) return AttemptOutcome::conflict;
  if (error == errc::validity_expired) return AttemptOutcome::expired;
  if (error == errc::cancelled) return AttemptOutcome::cancelled;
  return AttemptOutcome::unreachable;
}

int count(const std::vector<NodeOutcome>& nodes, NodeStatus status) {
  int n = 0;
  for (const auto& node : nodes) n += node.status == status;
  return n;
}

}  // namespace

void observe_attempt(const Engine& engine, std::string_view key, int attempt,
                     const RoundResult& round, std::error_code error, Clock::time_point started) {
  const auto& options = engine.options();
  if (!observed(options)) return;
  const auto now = Clock::now();
  const AttemptEvent event{key,
                           attempt,
                           outcome_of(error),
                           since(round.start, round.decided_at),
                           since(started, now),
                           round.grants,
                           round.quorum,
                           round.outcomes};
  if (logs(options, LogLevel::debug)) {
    log(options, LogLevel::debug,
        "lock " + quote_key(key) + " attempt " + std::to_string(attempt) + ": " +
            to_string(event.outcome) + " in " + ms(event.latency) + " (" +
            std::to_string(event.granted) + " of " + std::to_string(round.outcomes.size()) +
            " granted, quorum " + std::to_string(event.quorum) + ")");
  }
  if (options.observer) options.observer->on_attempt(event);
}

void observe_acquire(const Engine& engine, std::string_view key, int attempts,
                     std::error_code error, Clock::time_point started) {
  const auto& options = engine.options();
  if (!observed(options)) return;
  const AcquireEvent event{key, outcome_of(error), attempts, since(started, Clock::now())};
  if (logs(options, LogLevel::debug)) {
    log(options, LogLevel::debug,
        "lock " + quote_key(key) + ": " + to_string(event.outcome) + " after " +
            std::to_string(attempts) + " attempts in " + ms(event.duration));
  }
  if (options.observer) options.observer->on_acquire(event);
}

void observe_wake(const Engine& engine, std::string_view key, WakeCause cause,
                  Clock::time_point started) {
  const auto& options = engine.options();
  if (!observed(options)) return;
  const WakeEvent event{key, cause, since(started, Clock::now())};
  if (logs(options, LogLevel::debug)) {
    log(options, LogLevel::debug,
        "lock " + quote_key(key) + " woken by " + to_string(cause) + " after " +
            ms(event.since_start) + " of waiting");
  }
  if (options.observer) options.observer->on_wake(event);
}

void observe_lock(const Engine& engine, std::string_view key, LockOperation operation,
                  const RoundResult& round) {
  const auto& options = engine.options();
  if (!observed(options)) return;
  const int confirmed =
      count(round.outcomes, NodeStatus::granted) +
      (operation == LockOperation::release ? count(round.outcomes, NodeStatus::not_held) : 0);
  const LockEvent event{
      key,       operation,     round.reached(), since(round.start, round.decided_at),
      confirmed, round.outcomes};
  const auto level = event.confirmed ? LogLevel::debug : LogLevel::warning;
  if (logs(options, level)) {
    log(options, level,
        std::string(to_string(operation)) + " " + quote_key(key) +
            (event.confirmed ? " confirmed: " : " not confirmed: ") + round.summary("confirmed"));
  }
  if (options.observer) options.observer->on_lock(event);
}

void observe_watchdog(const Engine& engine, std::string_view key, const Error* lost,
                      Clock::time_point valid_until) {
  const auto& options = engine.options();
  if (!observed(options)) return;
  const auto left = std::chrono::floor<std::chrono::milliseconds>(valid_until - Clock::now());
  const WatchdogEvent event{key, lost != nullptr, lost,
                            std::max(left, std::chrono::milliseconds(0))};
  if (lost != nullptr && *lost == errc::hold_limit_reached) {
    // Asked for by the caller's max_hold or max_extensions: expected, the lock stays
    // valid until its validity ends.
    log(options, LogLevel::info, lost->message());
  } else if (lost != nullptr) {
    log(options, LogLevel::error,
        "lock " + quote_key(key) + " lost by the watchdog: " + lost->message());
  } else if (logs(options, LogLevel::debug)) {
    log(options, LogLevel::debug,
        "lock " + quote_key(key) + " extended by the watchdog, " +
            std::to_string(event.validity.count()) + " ms of validity left");
  }
  if (options.observer) options.observer->on_watchdog(event);
}

}  // namespace detail
}  // namespace redlock

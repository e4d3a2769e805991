#pragma once
// An append-only file of event records shared by every thread of a worker. Each record
// is one write(2) on an O_APPEND descriptor, so lines from threads never interleave and a
// worker that is killed loses at most the line being written (the checker counts a
// partial line as malformed).

#include <cstdint>
#include <string>

#include "checker/events.hpp"

namespace redlock::chaos {

/// Nanoseconds on CLOCK_MONOTONIC (steady_clock), the clock every record uses.
std::int64_t monotonic_ns();

class EventLog {
 public:
  /// Opens (creates) `path` for appending. Throws std::runtime_error.
  explicit EventLog(const std::string& path);
  ~EventLog();
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  /// Thread-safe.
  void append(const Event& event);
  /// A record of a type the checker passes over (e.g. the runner's "fault" records), as
  /// one JSON line without the newline. Thread-safe.
  void append_line(std::string line);

 private:
  int fd_ = -1;
};

}  // namespace redlock::chaos

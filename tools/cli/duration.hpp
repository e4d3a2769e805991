#pragma once
// Durations on the command line: "250ms", "10s", "2m", "1h", or sums like "1m30s".

#include <chrono>
#include <string>
#include <string_view>

namespace redlock::cli {

/// Parses a duration with a unit on every number. A bare number is refused rather than
/// guessed: "30" could mean seconds (flock, timeout) or milliseconds (the library), and
/// a lock TTL off by a factor of 1000 is a silent safety problem.
/// Throws std::invalid_argument with a message that quotes `text`.
std::chrono::milliseconds parse_duration(std::string_view text);

/// "1500ms", "30s", "2m": the shortest exact form, for messages and help.
std::string format_duration(std::chrono::milliseconds duration);

}  // namespace redlock::cli

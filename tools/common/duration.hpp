#pragma once
// The one parser of durations on the project's command lines: the redlock CLI, the chaos
// tools and the examples. A duration is numbers with units, "250ms", "10s", "2m", "1h",
// or a sum like "1m30s"; what differs between the programs is spelled in DurationSyntax.
// Header-only, so that every program can use it without a library of its own.

#include <cctype>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace redlock::tools {

struct DurationSyntax {
  /// A number without a unit is read as milliseconds (the chaos tools' files), or refused
  /// (the CLI: "30" could mean seconds or milliseconds, and a TTL off by a factor of 1000
  /// is a silent safety problem).
  bool bare_is_milliseconds = false;
  /// "us" is a unit too (the demo's sub-millisecond pauses).
  bool microseconds = false;
};

/// The duration, or why the text is not one (a sentence that does not quote the text).
struct ParsedDuration {
  std::chrono::microseconds value{0};
  std::string error;
  explicit operator bool() const noexcept { return error.empty(); }
};

inline ParsedDuration parse_duration(std::string_view text, DurationSyntax syntax = {}) {
  using std::int64_t;
  // Far beyond any sensible TTL or wait, and small enough that adding it to a
  // steady_clock time point can never overflow.
  constexpr int64_t max_us = int64_t{100} * 365 * 24 * 3600 * 1000 * 1000;
  const std::string units = syntax.microseconds ? "us, ms, s, m or h" : "ms, s, m or h";
  const std::string example = "write e.g. 250ms, 10s, 2m or 1h";
  auto unit_us = [&](std::string_view unit) -> int64_t {
    if (unit == "us" && syntax.microseconds) return 1;
    if (unit == "ms") return 1000;
    if (unit == "s") return 1000 * 1000;
    if (unit == "m") return int64_t{60} * 1000 * 1000;
    if (unit == "h") return int64_t{3600} * 1000 * 1000;
    return 0;
  };
  ParsedDuration parsed;
  if (text.empty()) {
    parsed.error = "empty duration (" + example + ")";
    return parsed;
  }
  int64_t total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t digits_start = i;
    int64_t number = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      number = number * 10 + (text[i] - '0');
      if (number > max_us) {
        parsed.error = "duration too long";
        return parsed;
      }
      ++i;
    }
    if (i == digits_start) {
      parsed.error = "not a duration (" + example + ")";
      return parsed;
    }
    const std::size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    const std::string_view unit = text.substr(unit_start, i - unit_start);
    int64_t factor = 0;
    if (unit.empty() && syntax.bare_is_milliseconds) {
      factor = 1000;
    } else if (unit.empty()) {
      parsed.error = "a duration needs a unit: " + units + " (e.g. " +
                     std::string(text.substr(digits_start, unit_start - digits_start)) + "s)";
      return parsed;
    } else if (factor = unit_us(unit); factor == 0) {
      parsed.error = "unknown unit \"" + std::string(unit) + "\" (use " + units + ")";
      return parsed;
    }
    if (number > (max_us - total) / factor) {
      parsed.error = "duration too long";
      return parsed;
    }
    total += number * factor;
  }
  parsed.value = std::chrono::microseconds(total);
  return parsed;
}

}  // namespace redlock::tools

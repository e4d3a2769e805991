#include "duration.hpp"

#include <cctype>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace redlock::cli {

namespace {

using std::chrono::milliseconds;

// Far beyond any sensible TTL or wait, and small enough that adding it to a
// steady_clock time point can never overflow.
constexpr std::int64_t max_ms = std::int64_t{100} * 365 * 24 * 3600 * 1000;

std::invalid_argument bad(std::string_view text, const std::string& why) {
  return std::invalid_argument("\"" + std::string(text) + "\": " + why);
}

std::int64_t unit_ms(std::string_view unit) {
  if (unit == "ms") return 1;
  if (unit == "s") return 1000;
  if (unit == "m") return 60 * 1000;
  if (unit == "h") return 3600 * 1000;
  return 0;
}

}  // namespace

milliseconds parse_duration(std::string_view text) {
  if (text.empty()) throw bad(text, "empty duration (write e.g. 250ms, 10s, 2m or 1h)");
  std::int64_t total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t digits_start = i;
    std::int64_t number = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
      number = number * 10 + (text[i] - '0');
      if (number > max_ms) throw bad(text, "duration too long");
      ++i;
    }
    if (i == digits_start) {
      throw bad(text, "not a duration (write e.g. 250ms, 10s, 2m or 1h)");
    }
    const std::size_t unit_start = i;
    while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
    const auto unit = text.substr(unit_start, i - unit_start);
    if (unit.empty()) {
      const auto number_text = std::string(text.substr(digits_start, unit_start - digits_start));
      throw bad(text, "a duration needs a unit: ms, s, m or h (e.g. " + number_text + "s)");
    }
    const auto factor = unit_ms(unit);
    if (factor == 0) {
      throw bad(text, "unknown unit \"" + std::string(unit) + "\" (use ms, s, m or h)");
    }
    if (number > (max_ms - total) / factor) throw bad(text, "duration too long");
    total += number * factor;
  }
  return milliseconds(total);
}

std::string format_duration(milliseconds duration) {
  const auto ms = duration.count();
  if (ms != 0 && ms % (3600 * 1000) == 0) return std::to_string(ms / (3600 * 1000)) + "h";
  if (ms != 0 && ms % (60 * 1000) == 0) return std::to_string(ms / (60 * 1000)) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace redlock::cli

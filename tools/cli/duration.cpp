#include "duration.hpp"

#include <stdexcept>

#include "../common/duration.hpp"

namespace redlock::cli {

using std::chrono::milliseconds;

milliseconds parse_duration(std::string_view text) {
  const tools::ParsedDuration parsed = tools::parse_duration(text);
  if (!parsed) throw std::invalid_argument("\"" + std::string(text) + "\": " + parsed.error);
  return std::chrono::duration_cast<milliseconds>(parsed.value);
}

std::string format_duration(milliseconds duration) {
  const auto ms = duration.count();
  if (ms != 0 && ms % (3600 * 1000) == 0) return std::to_string(ms / (3600 * 1000)) + "h";
  if (ms != 0 && ms % (60 * 1000) == 0) return std::to_string(ms / (60 * 1000)) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace redlock::cli

#pragma once
// Durations on the chaos command lines, in the CLI's notation: 250ms, 10s, 2m (a bare
// number is milliseconds).

#include <charconv>
#include <chrono>
#include <optional>
#include <string_view>

namespace redlock::chaos {

inline std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  long long value = 0;
  const char* end = text.data() + text.size();
  auto [rest, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || rest == text.data() || value < 0) return std::nullopt;
  const std::string_view unit(rest, static_cast<std::size_t>(end - rest));
  if (unit.empty() || unit == "ms") return std::chrono::milliseconds(value);
  if (unit == "s") return std::chrono::seconds(value);
  if (unit == "m") return std::chrono::minutes(value);
  return std::nullopt;
}

}  // namespace redlock::chaos

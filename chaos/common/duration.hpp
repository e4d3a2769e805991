#pragma once
// Durations on the chaos command lines and control files, in the CLI's notation (one
// parser for all, tools/common/duration.hpp): 250ms, 10s, 2m, 1m30s; a bare number is
// milliseconds.

#include <chrono>
#include <optional>
#include <string_view>

#include "../../tools/common/duration.hpp"

namespace redlock::chaos {

inline std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  const tools::ParsedDuration parsed = tools::parse_duration(text, {.bare_is_milliseconds = true});
  if (!parsed) return std::nullopt;
  return std::chrono::duration_cast<std::chrono::milliseconds>(parsed.value);
}

}  // namespace redlock::chaos

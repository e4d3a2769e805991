#pragma once
// Event records to and from JSON lines (the schema is in events.hpp).

#include <string>
#include <string_view>
#include <variant>

#include "checker/events.hpp"

namespace redlock::chaos {

/// An event; nothing (a blank line, or a record of a type the checker does not use, such
/// as {"type":"fault",...} from the runner); or the reason the line is malformed.
struct IgnoredRecord {};
using ParsedLine = std::variant<Event, IgnoredRecord, std::string>;

ParsedLine parse_event_line(std::string_view line);

/// One line of JSON, without the newline.
std::string to_json_line(const Event& event);

}  // namespace redlock::chaos

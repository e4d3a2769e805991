#include "proxy/fault_settings.hpp"

#include <string>

namespace redlock::chaos {

std::string_view to_string(ProxyMode mode) {
  switch (mode) {
    case ProxyMode::pass:
      return "pass";
    case ProxyMode::partition:
      return "partition";
    case ProxyMode::drop_replies:
      return "drop_replies";
    case ProxyMode::drop_requests:
      return "drop_requests";
  }
  return "?";
}

std::optional<ProxyMode> parse_proxy_mode(std::string_view text) {
  std::string name(text);
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  for (ProxyMode mode :
       {ProxyMode::pass, ProxyMode::partition, ProxyMode::drop_replies, ProxyMode::drop_requests}) {
    if (name == to_string(mode)) return mode;
  }
  return std::nullopt;
}

std::string_view to_string(Direction direction) {
  return direction == Direction::up ? "up" : "down";
}

std::optional<Direction> parse_direction(std::string_view text) {
  if (text == "up") return Direction::up;
  if (text == "down") return Direction::down;
  return std::nullopt;
}

bool FaultSettings::flows(Direction direction) const {
  switch (mode) {
    case ProxyMode::pass:
      return true;
    case ProxyMode::partition:
      return false;
    case ProxyMode::drop_replies:
      return direction == Direction::up;
    case ProxyMode::drop_requests:
      return direction == Direction::down;
  }
  return true;
}

}  // namespace redlock::chaos

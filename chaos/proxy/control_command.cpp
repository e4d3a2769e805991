#include "proxy/control_command.hpp"

#include <charconv>
#include <vector>

#include "common/duration.hpp"
#include "proxy/fault_proxy.hpp"

namespace redlock::chaos {
namespace {

std::vector<std::string_view> words(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

}  // namespace

ParsedControlLine parse_control_line(std::string_view line) {
  const auto w = words(line);
  if (w.empty() || w[0].front() == '#') return std::monostate{};
  ControlCommand command;
  const std::string_view verb = w[0];
  if (verb == "mode") {
    if (w.size() != 2) return std::string("usage: mode pass|partition|drop_replies|drop_requests");
    auto mode = parse_proxy_mode(w[1]);
    if (!mode) return "unknown mode '" + std::string(w[1]) + "'";
    command.kind = ControlCommand::Kind::mode;
    command.mode = *mode;
    return command;
  }
  if (verb == "latency") {
    if (w.size() != 3) return std::string("usage: latency up|down|both MS");
    if (w[1] != "both") {
      command.direction = parse_direction(w[1]);
      if (!command.direction) return "unknown direction '" + std::string(w[1]) + "'";
    }
    auto delay = parse_duration(w[2]);
    if (!delay) return "bad duration '" + std::string(w[2]) + "' (200, 200ms or 2s)";
    command.kind = ControlCommand::Kind::latency;
    command.latency = *delay;
    return command;
  }
  const std::pair<std::string_view, ControlCommand::Kind> bare[] = {
      {"reset", ControlCommand::Kind::reset},
      {"stats", ControlCommand::Kind::stats},
      {"port", ControlCommand::Kind::port},
      {"quit", ControlCommand::Kind::quit}};
  for (const auto& [name, kind] : bare) {
    if (verb != name) continue;
    if (w.size() != 1) return std::string(name) + " takes no argument";
    command.kind = kind;
    return command;
  }
  return "unknown command '" + std::string(verb) + "'";
}

std::string execute(FaultProxy& proxy, const ControlCommand& command) {
  using Kind = ControlCommand::Kind;
  switch (command.kind) {
    case Kind::mode:
      proxy.set_mode(command.mode);
      return "ok";
    case Kind::latency:
      for (Direction d : {Direction::up, Direction::down}) {
        if (!command.direction || *command.direction == d) proxy.set_latency(d, command.latency);
      }
      return "ok";
    case Kind::reset:
      proxy.reset_all();
      return "ok";
    case Kind::port:
      return "ok " + std::to_string(proxy.port());
    case Kind::quit:
      return "ok";
    case Kind::stats: {
      const ProxyStats s = proxy.stats();
      const auto up = static_cast<int>(Direction::up);
      const auto down = static_cast<int>(Direction::down);
      return "ok mode=" + std::string(to_string(proxy.mode())) +
             " latency_up=" + std::to_string(proxy.latency(Direction::up).count()) +
             " latency_down=" + std::to_string(proxy.latency(Direction::down).count()) +
             " accepted=" + std::to_string(s.accepted) + " active=" + std::to_string(s.active) +
             " resets=" + std::to_string(s.resets) +
             " forwarded_up=" + std::to_string(s.forwarded[up]) +
             " forwarded_down=" + std::to_string(s.forwarded[down]) +
             " dropped_up=" + std::to_string(s.dropped[up]) +
             " dropped_down=" + std::to_string(s.dropped[down]);
    }
  }
  return "error unknown command";
}

}  // namespace redlock::chaos

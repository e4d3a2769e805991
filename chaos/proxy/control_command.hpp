#pragma once
// The line protocol that drives redlock-fault-proxy from a shell or a scenario runner,
// one command per line, one reply line per command:
//
//   mode pass|partition|drop_replies|drop_requests   -> ok
//   latency up|down|both MS                          -> ok     (MS: 200, 200ms or 2s)
//   reset                                            -> ok     (RST every client connection)
//   stats                                            -> ok mode=... accepted=N ...
//   port                                             -> ok PORT
//   quit                                             -> ok     (then the proxy exits)
//
// Anything else gets "error <why>". Blank lines and lines starting with '#' get no reply,
// so a scenario file can be piped in as is.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "proxy/fault_settings.hpp"

namespace redlock::chaos {

class FaultProxy;

struct ControlCommand {
  enum class Kind { mode, latency, reset, stats, port, quit };
  Kind kind = Kind::stats;
  ProxyMode mode = ProxyMode::pass;     ///< for Kind::mode
  std::optional<Direction> direction;   ///< for Kind::latency; nullopt means both
  std::chrono::milliseconds latency{};  ///< for Kind::latency
};

/// A command, nothing (blank line or comment), or the error text for a bad line.
using ParsedControlLine = std::variant<std::monostate, ControlCommand, std::string>;

ParsedControlLine parse_control_line(std::string_view line);

/// Runs `command` on `proxy` and returns the reply line, without its newline.
std::string execute(FaultProxy& proxy, const ControlCommand& command);

}  // namespace redlock::chaos

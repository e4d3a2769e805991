#pragma once
// The faults a FaultProxy applies to the bytes it carries, and its counters. Plain data:
// the proxy's loop thread owns one instance and every connection reads it.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace redlock::chaos {

/// What happens to bytes crossing the proxy.
enum class ProxyMode {
  pass,           ///< Forward both ways.
  partition,      ///< Blackhole both ways: connections are accepted, nothing crosses.
  drop_replies,   ///< Requests reach the server (and are applied); replies are discarded.
  drop_requests,  ///< Requests are discarded, so the server never sees them.
};

/// up: client to server (requests); down: server to client (replies).
enum class Direction { up = 0, down = 1 };

std::string_view to_string(ProxyMode mode);
/// "pass", "partition", "drop_replies", "drop_requests" (also with '-' for '_').
std::optional<ProxyMode> parse_proxy_mode(std::string_view text);
std::string_view to_string(Direction direction);
/// "up" or "down".
std::optional<Direction> parse_direction(std::string_view text);

struct FaultSettings {
  ProxyMode mode = ProxyMode::pass;
  /// Added one-way delay, indexed by Direction.
  std::chrono::milliseconds latency[2] = {};

  /// Whether bytes travelling in `direction` reach the other side under `mode`.
  bool flows(Direction direction) const;
  std::chrono::milliseconds delay(Direction direction) const {
    return latency[static_cast<int>(direction)];
  }
};

/// Counters since the proxy started. Bytes are counted when they are delivered or
/// discarded, so bytes still in a delay line are in neither.
struct ProxyStats {
  std::uint64_t accepted = 0;  ///< client connections accepted
  std::uint64_t active = 0;    ///< client connections open now
  std::uint64_t resets = 0;    ///< client connections closed with RST (reset_all, upstream RST)
  std::uint64_t forwarded[2] = {};  ///< bytes delivered, indexed by Direction
  std::uint64_t dropped[2] = {};    ///< bytes discarded by a fault, indexed by Direction
};

}  // namespace redlock::chaos

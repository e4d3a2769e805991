#include "member/member_events.hpp"

#include <memory>
#include <string>

namespace redlock {

const char* to_string(NodeEventKind kind) noexcept {
  switch (kind) {
    case NodeEventKind::connected:
      return "connected";
    case NodeEventKind::down:
      return "down";
    case NodeEventKind::connect_failed:
      return "connect_failed";
    case NodeEventKind::reconnected:
      return "reconnected";
    case NodeEventKind::script_reloaded:
      return "script_reloaded";
    case NodeEventKind::overloaded:
      return "overloaded";
    case NodeEventKind::guarded:
      return "guarded";
    case NodeEventKind::master_changed:
      return "master_changed";
    case NodeEventKind::moved:
      return "moved";
    case NodeEventKind::ask:
      return "ask";
    case NodeEventKind::slot_map_read:
      return "slot_map_read";
    case NodeEventKind::misconfigured:
      return "misconfigured";
  }
  return "unknown";
}

namespace detail {

net::ConnectionOptions observe_connection(net::ConnectionOptions connection,
                                          const Options& options) {
  if (!observed(options)) return connection;
  // Shared by the callbacks of this node's connection (loop thread only).
  struct NodeState {
    std::string node;
    std::shared_ptr<Observer> observer;
    LogSink log;
    LogLevel log_level;
    bool ever_ready = false;
    bool up = false;
    bool failing = false;  // failed since it was last up (or since the start)

    void report(NodeEventKind kind, std::error_code error, std::string_view detail, LogLevel level,
                const std::string& line) const {
      if (log && level >= log_level) log(level, "node " + node + " " + line);
      if (observer) observer->on_node({node, kind, error, detail});
    }
  };
  auto state = std::make_shared<NodeState>(
      NodeState{connection.endpoint.display, options.observer, options.log, options.log_level});
  auto ready = std::move(connection.on_ready);
  connection.on_ready = [state, ready = std::move(ready)] {
    if (!state->ever_ready) {
      state->report(NodeEventKind::connected, {}, {}, LogLevel::debug, "connected");
    } else if (!state->up) {
      state->report(NodeEventKind::reconnected, {}, {}, LogLevel::info, "is back up");
    }
    state->ever_ready = true;
    state->up = true;
    state->failing = false;
    if (ready) ready();
  };
  // Down is a warning; so is the first failed connect of a node that was never up. The
  // reconnects that fail after either are debug lines: a node that stays down would
  // otherwise log once per backoff.
  connection.on_script_reloaded = [state](std::string_view script) {
    state->report(NodeEventKind::script_reloaded, {}, script, LogLevel::info,
                  "had lost the " + std::string(script) + " script (NOSCRIPT): sent it again");
  };
  connection.on_overloaded = [state](std::string_view detail) {
    state->report(NodeEventKind::overloaded, make_error_code(errc::overloaded), detail,
                  LogLevel::warning, "refused a command: " + std::string(detail));
  };
  connection.on_master_changed = [state](std::string_view master) {
    state->report(NodeEventKind::master_changed, {}, master, LogLevel::warning,
                  "now served by " + std::string(master));
  };
  // A cluster's redirections and slot maps: routine during a resharding, so no warnings.
  connection.on_redirected = [state](bool moved, std::string_view detail) {
    state->report(moved ? NodeEventKind::moved : NodeEventKind::ask, {}, detail,
                  moved ? LogLevel::info : LogLevel::debug, "redirected: " + std::string(detail));
  };
  connection.on_slot_map = [state](std::string_view shards) {
    state->report(NodeEventKind::slot_map_read, {}, shards, LogLevel::debug,
                  "slot map read: " + std::string(shards));
  };
  connection.on_misconfigured = [state](std::string_view why) {
    state->report(NodeEventKind::misconfigured, {}, why, LogLevel::warning, std::string(why));
  };
  connection.on_failed = [state](std::error_code error, std::string_view detail) {
    if (state->up) {
      state->up = false;
      state->failing = true;
      state->report(NodeEventKind::down, error, detail, LogLevel::warning,
                    "down: " + std::string(detail));
      return;
    }
    const auto level = state->failing ? LogLevel::debug : LogLevel::warning;
    state->failing = true;
    state->report(NodeEventKind::connect_failed, error, detail, level,
                  "connect failed: " + std::string(detail));
  };
  return connection;
}

std::function<void(std::chrono::milliseconds, std::string_view)> observe_guard(
    std::string node, const Options& options) {
  if (!observed(options)) return {};
  return [node = std::move(node), observer = options.observer, log = options.log,
          log_level = options.log_level](std::chrono::milliseconds left, std::string_view why) {
    if (log && LogLevel::warning >= log_level) {
      log(LogLevel::warning, "node " + node + " does not count for " +
                                 std::to_string(left.count()) + " ms: " + std::string(why));
    }
    if (observer) {
      NodeEvent event{node, NodeEventKind::guarded, {}, why};
      event.guarded_for = left;
      observer->on_node(event);
    }
  };
}

std::function<void(std::string_view)> observe_misconfiguration(std::string node,
                                                               const Options& options) {
  if (!observed(options)) return {};
  return [node = std::move(node), observer = options.observer, log = options.log,
          log_level = options.log_level](std::string_view why) {
    if (log && LogLevel::warning >= log_level) {
      log(LogLevel::warning, "node " + node + ": " + std::string(why));
    }
    if (observer) observer->on_node({node, NodeEventKind::misconfigured, {}, why});
  };
}

}  // namespace detail
}  // namespace redlock

#pragma once
// What a connection says before its first command: AUTH (when the URL has a password)
// and SELECT (when it names a database other than 0), as data. It encodes the commands
// and judges their replies; the connection (net/connection.cpp) sends and reads. For a
// Sentinel group (net/sentinel_resolution.hpp) it also asks a sentinel for the master,
// and makes sure the server it names is one (ROLE) before any command reaches it.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "net/endpoint.hpp"
#include "net/errors.hpp"

struct redisReply;

namespace redlock::net {

class Handshake {
 public:
  enum class Outcome { more, done, failed };
  /// What the connection is for: commands (plain); asking the sentinel `endpoint` for
  /// the address of master endpoint.master_name (ask_sentinel: SENTINEL
  /// GET-MASTER-ADDR-BY-NAME last); commands on a master a sentinel named
  /// (confirm_master: ROLE last, which must say master).
  enum class Goal { plain, ask_sentinel, confirm_master };

  /// Appends the handshake's commands for `endpoint` to `out`. False when the endpoint
  /// needs none (the connection is ready at once).
  bool start(const Endpoint& endpoint, std::string& out, Goal goal = Goal::plain);

  /// After ask_sentinel is done: the address the sentinel named.
  const std::string& named_host() const noexcept { return named_host_; }
  std::uint16_t named_port() const noexcept { return named_port_; }
  /// After ask_sentinel is done: how long the sentinel has known the named server as the
  /// group's master (SENTINEL MASTER's role-reported-time), when it said so.
  std::optional<std::chrono::milliseconds> named_role_age() const noexcept {
    return named_role_age_;
  }

  /// Judges the reply to the next step. `failed` fills `error`: auth_error for AUTH
  /// ("AUTH on <where> failed: <Redis' text>"), the reply's own code for SELECT, and
  /// protocol_error for a reply that is neither OK nor an error; connection_error for a
  /// sentinel that names no master ("<where> does not monitor this master name") and a
  /// server that is not the master ("ROLE on <where> answered 'slave', not master").
  Outcome on_reply(const redisReply* reply, const Endpoint& endpoint, std::string_view where,
                   NetError& error);

 private:
  enum class Step { auth, select, ask_sentinel, master_info, role };
  Outcome on_sentinel_reply(const redisReply* reply, std::string_view where, NetError& error);
  Outcome on_role_reply(const redisReply* reply, std::string_view where, NetError& error);

  std::array<Step, 4> steps_{};
  std::string named_host_;
  std::uint16_t named_port_ = 0;
  std::optional<std::chrono::milliseconds> named_role_age_;
  std::size_t count_ = 0;
  std::size_t done_ = 0;
};

}  // namespace redlock::net

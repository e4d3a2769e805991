#pragma once
// What a connection says before its first command: AUTH (when the URL has a password)
// and SELECT (when it names a database other than 0), as data. It encodes the commands
// and judges their replies; the connection (net/connection.cpp) sends and reads.

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

#include "net/endpoint.hpp"
#include "net/errors.hpp"

struct redisReply;

namespace redlock::net {

class Handshake {
 public:
  enum class Outcome { more, done, failed };

  /// Appends the handshake's commands for `endpoint` to `out`. False when the endpoint
  /// needs none (the connection is ready at once).
  bool start(const Endpoint& endpoint, std::string& out);

  /// Judges the reply to the next step. `failed` fills `error`: auth_error for AUTH
  /// ("AUTH on <where> failed: <Redis' text>"), the reply's own code for SELECT, and
  /// protocol_error for a reply that is neither OK nor an error.
  Outcome on_reply(const redisReply* reply, const Endpoint& endpoint, std::string_view where,
                   NetError& error);

 private:
  enum class Step { auth, select };
  std::array<Step, 2> steps_{};
  std::size_t count_ = 0;
  std::size_t done_ = 0;
};

}  // namespace redlock::net

#pragma once
// What the fleet asks of the loopback interface: a free port for a new member, and
// whether a member's port is served, and by whom.

#include <sys/types.h>

#include <cstdint>
#include <string>

namespace redlock::testing::detail {

/// A port the kernel reports free on 127.0.0.1. It is released before redis-server binds
/// it, so another process may take it in between: the caller sees that (the server exits,
/// or another pid answers) and tries another. Throws std::runtime_error.
std::uint16_t free_port();

/// What a probe of 127.0.0.1:`port` found.
enum class Probe {
  silent,   ///< refused, timed out, or not yet ready (loading its data)
  ready,    ///< the server with process id `pid` answered PING
  foreign,  ///< a server with another process id answers there
};
/// One INFO server and PING, with a 2 s timeout, over plain RESP.
Probe probe(std::uint16_t port, pid_t pid);

}  // namespace redlock::testing::detail

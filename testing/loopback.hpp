#pragma once
// What a new server asks of the loopback interface: a free port.

#include <cstdint>

namespace redlock::testing::detail {

/// A port the kernel reports free on 127.0.0.1. It is released before redis-server binds
/// it, so another process may take it in between: the caller sees that (the server exits,
/// or another pid answers) and tries another. Throws std::runtime_error.
std::uint16_t free_port();

}  // namespace redlock::testing::detail

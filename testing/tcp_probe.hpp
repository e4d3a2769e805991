#pragma once
// One TCP connect, to tell how a member's link behaves: it connects, is refused, is
// unreachable, or hears nothing at all.

#include <chrono>
#include <cstdint>
#include <string>

namespace redlock::testing::detail {

/// How a TCP connect from the calling thread's network namespace to `address` (IPv4
/// literal) : `port` ends within `timeout`: 0 when it connects (the connection is closed
/// again), else its errno: ECONNREFUSED, ENETUNREACH, ..., ETIMEDOUT when nothing came back.
int connect_error(const std::string& address, std::uint16_t port,
                  std::chrono::milliseconds timeout);

}  // namespace redlock::testing::detail

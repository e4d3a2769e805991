#pragma once
// Where a retry's jitter comes from. Injected wherever a delay is drawn (the acquisition,
// the connection's reconnect) so that tests script it, and seeded from the CSPRNG rather
// than from a clock, so that processes started together do not draw alike.

#include <cstdint>
#include <functional>

namespace redlock::core {

/// Uniform 64-bit random numbers.
using RandomSource = std::function<std::uint64_t()>;

/// A RandomSource seeded once from fill_random, OpenSSL's CSPRNG (thread-safe).
RandomSource system_random();

}  // namespace redlock::core

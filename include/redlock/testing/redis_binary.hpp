#pragma once
/// @file
/// Where redlock::testing finds the redis-server it runs.

#include <string>

namespace redlock::testing {

/// The redis-server a Fleet runs: $REDLOCK_REDIS_SERVER when set (a path), else the first
/// `redis-server` on $PATH. Throws std::runtime_error naming what is missing (the variable's
/// file, or redis-server on $PATH, with the Debian package that has it) when there is none.
std::string redis_server_binary();

}  // namespace redlock::testing

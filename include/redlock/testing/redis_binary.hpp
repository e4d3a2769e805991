#pragma once
/// @file
/// Where redlock::testing finds the redis-server it runs, and the redis-cli that forms its
/// Redis Clusters.

#include <string>

namespace redlock::testing {

/// The redis-server a Fleet runs: $REDLOCK_REDIS_SERVER when set (a path), else the first
/// `redis-server` on $PATH. Throws std::runtime_error naming what is missing (the variable's
/// file, or redis-server on $PATH, with the Debian package that has it) when there is none.
std::string redis_server_binary();

/// The redis-cli that forms a cluster member (MemberKind::cluster) with
/// `redis-cli --cluster create`: $REDLOCK_REDIS_CLI when set (a path), else the first
/// `redis-cli` on $PATH. Throws std::runtime_error naming what is missing (Debian package:
/// redis-tools) when there is none.
std::string redis_cli_binary();

}  // namespace redlock::testing

#pragma once
// What every bad-input test shares: five healthy redis-server processes started once per
// test program, client options with deadlines generous enough for two shared cores and
// sanitizer or valgrind builds, and the checks that make a row's guarantees concrete.

#include <chrono>
#include <string>
#include <vector>

#include <redlock/redlock.hpp>

#include "support/redis_server.hpp"

namespace redlock::badinput {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

/// Per-node deadline of every client here: long, so that a healthy node never times out
/// on a loaded machine; rows that need a timeout get it from a node that never answers.
inline constexpr std::chrono::milliseconds node_timeout = 2000ms;
inline constexpr std::chrono::milliseconds ttl = 30s;
/// No operation of these tests may take longer (liveness, not performance).
inline constexpr std::chrono::milliseconds liveness_bound = 30s;

/// The five healthy nodes, started on first use and stopped when the program exits.
test::RedisCluster& healthy();
/// URLs of the first `count` healthy nodes.
std::vector<std::string> healthy_urls(std::size_t count);

/// Options over `nodes` with the deadlines above and a quick reconnect.
Options options(std::vector<std::string> nodes);

/// A key unique to the running test, so tests never see each other's locks.
std::string test_key();

/// `healthy` with `bad` placed at `positions` (ascending): bad[i] goes to positions[i].
std::vector<std::string> interleave(const std::vector<std::string>& healthy,
                                    const std::vector<std::string>& bad,
                                    const std::vector<std::size_t>& positions);

/// Asserts (gtest) that `status(key)` finds the key free on each node at `positions`,
/// which must answer. The guarantee "no leaked lock" of every row.
void expect_not_held(Client& client, const std::string& key,
                     const std::vector<std::size_t>& positions);

long long elapsed_ms(Clock::time_point since);

}  // namespace redlock::badinput

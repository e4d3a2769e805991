#pragma once
// The state behind a Member, shared by member.cpp (the verbs) and fleet.cpp (which
// makes members): the server, group or cluster classes the project's tests use too, and
// a standalone member's proxy and clock.

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <redlock/testing/fleet.hpp>
#include <redlock/testing/member.hpp>

#include "fake_clock.hpp"
#include "proxy/fault_proxy.hpp"
#include "redis_server.hpp"
#include "sentinel_group.hpp"
#include "sharded_cluster.hpp"

namespace redlock::testing {

struct Member::Impl {
  /// Starts the member in `dir` (created here): a standalone server on a free port and
  /// its proxy when the fleet has them, or a Sentinel group or cluster. Throws
  /// std::runtime_error naming the member, with the log's tail.
  Impl(std::size_t index, std::string dir, const FleetOptions& options, const MemberSpec& spec);
  ~Impl();

  /// Whether the standalone server lives and is not paused: what answers a command.
  bool answering() const;
  /// The proxy, or std::logic_error naming `verb` and why the member has none.
  chaos::FaultProxy& proxy(const char* verb);
  std::string log_tail(std::size_t lines) const;
  /// "member <index> (a Sentinel group)", for messages.
  std::string name() const;
  /// The data servers of a Sentinel group or a cluster.
  std::vector<detail::RedisServer*> data_servers() const;
  /// What pause(), kill() and restart() act on in a Sentinel group or a cluster: its
  /// current master, or every master.
  std::vector<detail::RedisServer*> masters() const;

  std::size_t index;
  MemberKind kind;
  std::string dir;
  bool persistence;

  /// A standalone member's server, and its proxy when the fleet has them.
  std::unique_ptr<detail::RedisServer> server;
  std::unique_ptr<chaos::FaultProxy> fault_proxy;
  /// With FleetOptions::fake_clock: the library, and the clock it follows.
  std::string fake_clock_library;
  std::optional<detail::FakeClock> clock;

  std::unique_ptr<detail::SentinelGroup> group;
  std::unique_ptr<detail::ShardedCluster> cluster;
  /// What pause() stopped in a group or a cluster, for resume().
  std::vector<detail::RedisServer*> paused_servers;
};

}  // namespace redlock::testing

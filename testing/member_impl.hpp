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
#include "netns_network.hpp"
#include "proxy/fault_proxy.hpp"
#include "redis_server.hpp"
#include "sentinel_group.hpp"
#include "sharded_cluster.hpp"

namespace redlock::testing {

struct Member::Impl {
  /// Starts the member in `dir` (created here): a standalone server on a free port and
  /// its proxy when the fleet has them, or a Sentinel group or cluster. Throws
  /// std::runtime_error naming the member, with the log's tail.
  /// With FleetOptions::network_namespaces, `network` is the fleet's, which outlives the
  /// member, and the server runs in the member's namespace there.
  Impl(std::size_t index, std::string dir, const FleetOptions& options, const MemberSpec& spec,
       detail::NetnsNetwork* network);
  ~Impl();

  /// Whether the standalone server lives and is not paused: what answers a command.
  bool answering() const;
  /// The proxy, or std::logic_error naming `verb` and why the member has none.
  chaos::FaultProxy& proxy(const char* verb);
  /// The fleet's network namespaces, or std::logic_error naming `verb` and why there are
  /// none.
  detail::NetnsNetwork& namespaces(const char* verb);
  /// The sides of its links: 0, the test process, and h + 1 for each client host h.
  std::vector<std::size_t> every_side() const;
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

  /// With FleetOptions::network_namespaces: the fleet's network, and the number of client
  /// hosts in it (each a side of the member's links beside the test process's).
  detail::NetnsNetwork* network = nullptr;
  std::size_t client_hosts = 0;

  std::unique_ptr<detail::SentinelGroup> group;
  std::unique_ptr<detail::ShardedCluster> cluster;
  /// What pause() stopped in a group or a cluster, for resume().
  std::vector<detail::RedisServer*> paused_servers;
};

}  // namespace redlock::testing

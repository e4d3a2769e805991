#pragma once
// The state behind a Member, shared by member.cpp (the verbs) and fleet.cpp (which
// makes members). A standalone member is a process of its own here (and a proxy); a
// Sentinel group or a cluster is the class the project's tests use for them.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
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
  Impl(std::size_t index, std::string dir, std::string binary, const FleetOptions& options,
       const MemberSpec& spec);
  ~Impl();

  /// Starts the standalone server on port_ again; the port may take a moment to be free.
  void restart();
  /// Kills and reaps the standalone server, if it runs.
  void stop();
  /// Whether the standalone process lives (reaping it when it died on its own).
  bool alive();
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
  std::string binary;
  bool persistence;
  std::vector<std::string> extra_args;
  std::uint16_t port = 0;
  pid_t pid = -1;
  bool paused = false;
  std::unique_ptr<chaos::FaultProxy> fault_proxy;
  /// With FleetOptions::fake_clock: the library, and the clock it follows.
  std::string fake_clock_library;
  std::optional<detail::FakeClock> clock;

  std::unique_ptr<detail::SentinelGroup> group;
  std::unique_ptr<detail::ShardedCluster> cluster;
  /// What pause() stopped in a group or a cluster, for resume().
  std::vector<detail::RedisServer*> paused_servers;

 private:
  std::vector<std::string> command_line() const;
  /// Spawns on port_ and waits until it answers; false (reaped, `why` said) when not.
  bool start(std::string& why);
};

}  // namespace redlock::testing

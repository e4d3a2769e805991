#pragma once
/// @file
/// A set of Redlock members for tests: what redlock::Options::nodes lists.

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <redlock/testing/member.hpp>

namespace redlock::testing {

/// What one member of a Fleet is made of.
struct MemberSpec {
  /// What it is (MemberKind has what each kind starts).
  MemberKind kind = MemberKind::standalone;
  /// MemberKind::sentinel: the master's replicas. MemberKind::cluster: each shard's
  /// replicas (0: no fail_over()). Ignored for a standalone member.
  std::size_t replicas = 1;
  /// MemberKind::cluster: its shards, each a master (Redis Cluster needs at least 3).
  std::size_t shards = 3;
  /// MemberKind::sentinel: how long the sentinels wait before they fail a silent master
  /// over on their own (sentinel down-after-milliseconds).
  std::chrono::milliseconds down_after{500};
};

/// What a Fleet starts.
struct FleetOptions {
  /// Independent standalone masters (a Redlock deployment of N nodes): 5 by default.
  /// Ignored when `members` is not empty.
  std::size_t masters = 5;
  /// The members, in index order, when they are not all standalone, e.g.
  /// {{}, {}, {}, {.kind = MemberKind::sentinel}, {.kind = MemberKind::cluster}}.
  std::vector<MemberSpec> members{};
  /// Append-only file with appendfsync always on every data server, so that a member
  /// restarted with `{.persistence = true}` keeps every write it acknowledged. Off: no
  /// AOF, no RDB.
  bool persistence = false;
  /// A fault proxy in front of each standalone member (needed by cut(), heal(), slow(),
  /// reset_connections()); their urls() then name the proxies. Off: urls() name the
  /// servers themselves. Sentinel and cluster members never have one: their servers
  /// announce their own addresses, which clients then use directly.
  bool proxies = true;
  /// Standalone members run with the fake clock preloaded (LD_PRELOAD), so that
  /// Member::set_clock() can move their wall clock. Off: set_clock() throws.
  bool fake_clock = false;
  /// The fake clock library; empty: $REDLOCK_FAKECLOCK when set, else the one installed
  /// with the kit (LIBDIR/redlock/libredlock_fakeclock.so of its install prefix).
  std::string fake_clock_library{};
  /// Appended to every data server's command line, e.g. {"--maxmemory", "10mb"}.
  std::vector<std::string> extra_args{};
};

/// Real redis-server processes on free loopback ports, each member in a directory of its
/// own under one temporary directory. The constructor returns once every member is ready
/// (a standalone master answers PING, a Sentinel group's sentinels know every replica, a
/// cluster's servers agree on every slot); the destructor kills every process and removes
/// the directory, also when a test throws. A missing redis-server (or redis-cli, for a
/// cluster) is an exception (see redis_binary.hpp), never a skip. The fleet talks to its
/// servers itself, and sets SIGPIPE to be ignored in the process so that a write to a
/// server that died is an error rather than the end of the test.
///
/// The servers die with the thread that started them (PR_SET_PDEATHSIG), so that a test
/// that crashes leaves none behind: make the fleet, and restart members, on a thread that
/// outlives them, normally the test's main thread.
class Fleet {
 public:
  /// Starts the members. Throws std::runtime_error, naming the member and with the tail
  /// of its log, when one does not come up; those already started are stopped again.
  explicit Fleet(FleetOptions options = {});
  /// Kills every member and removes the temporary directory.
  ~Fleet();
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  /// Member `i` (std::out_of_range past size()).
  Member& operator[](std::size_t i);
  /// Member `i` (std::out_of_range past size()).
  const Member& operator[](std::size_t i) const;
  /// How many members.
  std::size_t size() const;
  /// Every member's url(), in index order: hand them to redlock::Options::nodes.
  std::vector<std::string> urls() const;
  /// Undoes every fault: resumes paused members, restarts dead ones (with their data when
  /// the fleet has persistence), heals the proxies, puts fake clocks back to the real
  /// time. For a fixture shared by many tests. A failover is not undone.
  void heal_all();
  /// The temporary directory that holds every member's.
  const std::string& dir() const;
  /// The options it was made with.
  const FleetOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace redlock::testing

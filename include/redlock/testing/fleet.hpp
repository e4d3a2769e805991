#pragma once
/// @file
/// A set of Redlock members for tests: what redlock::Options::nodes lists.

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <redlock/testing/member.hpp>
#include <redlock/testing/unsupported.hpp>

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
  /// Each member's redis-server runs in a network namespace of its own, reached from the
  /// test process's namespace over a veth pair of its own, so that the kernel makes the
  /// network faults: Member::partition() sets a link down or removes an address. url()
  /// then names the member's end of that pair ("redis://10.200.0.2:6379": the addresses
  /// come from a /16 of private space that no address or route of this machine overlaps,
  /// picked by the fleet and claimed by a route of its own while it lives). `proxies` is
  /// ignored: there are none, and cut(), heal(), slow(), reset_connections() throw
  /// std::logic_error. Only standalone members: the servers of a Sentinel group or a
  /// cluster reach one another and announce their own addresses, so a link of theirs
  /// cut would split the group rather than cut the member off (std::logic_error, before
  /// anything starts). At most 63 members.
  ///
  /// Needs root and the ip command (iproute2): without them, or where the kernel refuses
  /// a namespace or a veth pair, the Fleet throws Unsupported (unsupported.hpp), for a
  /// test to skip. Every name it makes starts with Fleet::namespace_prefix(); the
  /// destructor removes the namespaces, links and route, and a guardian process does when
  /// the test process dies any other way, SIGINT and SIGKILL included.
  bool network_namespaces = false;
  /// With network_namespaces: client hosts, each a network namespace with a link of its
  /// own to every member (Fleet::host()), so that a test can give clients different views
  /// of the members: split views, a host cut from a minority. At most 254.
  std::size_t client_hosts = 0;
};

/// What a program run by ClientHost::run() said.
struct RunResult {
  /// Its exit status; 128 + the signal's number when a signal ended it; 126 when the
  /// namespace could not be entered, 127 when the program could not be run.
  int exit_code = 0;
  /// Its stdout and stderr, interleaved.
  std::string output;
};

/// A client host of a Fleet made with FleetOptions::client_hosts: a network namespace with
/// a link of its own to every member (the member's end of it is another address of the
/// member's), which Member::partition() cuts too and partition() here cuts alone. Made and
/// removed by the Fleet. Verbs are not thread-safe, as a Member's.
class ClientHost {
 public:
  /// The calling thread inside the host's network namespace, until destroyed (on the
  /// same thread), which puts the thread back into the namespace it was in. Sockets the
  /// thread opens meanwhile are the host's, and so are those of every thread it starts
  /// meanwhile, for their whole life: a redlock::Client created inside runs its loop
  /// thread there, and reaches the members by this host's links (urls()).
  class Inside {
   public:
    /// @cond INTERNAL
    // Made by enter() only.
    explicit Inside(int previous);
    /// @endcond
    ~Inside();
    Inside(const Inside&) = delete;
    Inside& operator=(const Inside&) = delete;

   private:
    int previous_;
  };

  /// @cond INTERNAL
  // Made by Fleet only.
  struct Impl;
  explicit ClientHost(std::unique_ptr<Impl> impl);
  /// @endcond
  ~ClientHost();
  ClientHost(const ClientHost&) = delete;
  ClientHost& operator=(const ClientHost&) = delete;

  /// Its index in the Fleet.
  std::size_t index() const;
  /// Every member's "redis://<address>:6379" as this host reaches it, in index order:
  /// redlock::Options::nodes for a client inside.
  std::vector<std::string> urls() const;
  /// Cuts the link between this host and member `member` alone (see Partition); returns
  /// once in effect.
  void partition(std::size_t member, Partition how = Partition::silent);
  /// Undoes partition() of `member`, returning once this host connects to its port again.
  /// Throws std::runtime_error when the link does not carry again within 5 s.
  void heal_partition(std::size_t member);
  /// Whether the link to `member` is cut, by partition() here or Member::partition().
  bool partitioned(std::size_t member) const;
  /// Runs `argv` inside the host to its end (argv[0] a path, or a name looked up on
  /// PATH), and returns what it said. Throws std::invalid_argument for an empty argv.
  RunResult run(const std::vector<std::string>& argv) const;
  /// The calling thread inside the host (see Inside). Throws std::runtime_error when the
  /// namespace cannot be entered.
  [[nodiscard]] Inside enter() const;
  /// Its namespace, as `ip netns` names it.
  std::string name() const;

 private:
  std::unique_ptr<Impl> impl_;
};

/// Real redis-server processes on free loopback ports (or in network namespaces of their
/// own: FleetOptions::network_namespaces), each member in a directory of its
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
  /// Client host `i` (FleetOptions::client_hosts; std::out_of_range past them).
  ClientHost& host(std::size_t i);
  /// With FleetOptions::network_namespaces, the start of every name the fleet gives,
  /// `rl<pid>f<n>`: its namespaces (`<prefix>-m<i>`, `<prefix>-h<i>`) and its ends of the
  /// links in the test process's namespace (`<prefix>m<i>`). "" otherwise.
  std::string namespace_prefix() const;
  /// Undoes every fault: resumes paused members, restarts dead ones (with their data when
  /// the fleet has persistence), heals the proxies and the partitions (the client hosts'
  /// too), puts fake clocks back to the real time. For a fixture shared by many tests. A
  /// failover is not undone.
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

#pragma once
/// @file
/// One member of a Fleet: a redis-server process and the fault proxy in front of it, a
/// Sentinel group, or a Redis Cluster.

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace redlock::testing {

/// What a member is, and so what its url() names and what its verbs act on.
enum class MemberKind {
  /// One redis-server (a Redlock node), behind a fault proxy when the fleet has them:
  /// "redis://127.0.0.1:<port>"; with FleetOptions::network_namespaces, in a network
  /// namespace of its own: "redis://<its address>:6379".
  standalone,
  /// A master, its replicas and three sentinels watching it (quorum 2), found through
  /// the sentinels: "redis-sentinel://127.0.0.1:<s1>,127.0.0.1:<s2>,127.0.0.1:<s3>/redlock".
  /// pause(), resume(), kill() and restart() act on its current master.
  sentinel,
  /// A Redis Cluster of shards, each a master and its replicas, every server a seed:
  /// "redis-cluster://127.0.0.1:<p1>,...". pause(), resume(), kill() and restart() act on
  /// every master at once: the member as a whole is down.
  cluster,
};

/// How Member::restart() brings a member back.
struct RestartOptions {
  /// True: the member comes back with what its append-only file holds (every write
  /// acknowledged before the kill: appendfsync always), which needs
  /// FleetOptions::persistence. False: its data is deleted first and it comes back empty,
  /// as a node without persistence does after a crash.
  bool persistence = false;
};

/// How Member::partition() cuts a member off, in the kernel
/// (FleetOptions::network_namespaces).
enum class Partition {
  /// The member's end of each of its links is set down, as a cable pulled at the member:
  /// what clients send vanishes, with no RST and no ICMP error. Established connections
  /// go silent (their retransmissions go into a blackhole) and new connects time out.
  silent,
  /// The address of the clients' end of each link is removed, and its route with it: a
  /// new connect fails at once with ENETUNREACH ("Network is unreachable"), and what an
  /// established connection sends cannot leave, so it goes silent.
  unreachable,
};

/// A member of a Fleet, made and stopped by it: the processes of one Redlock member, each
/// on a loopback port of its own (or in a network namespace of its own:
/// FleetOptions::network_namespaces), in a directory of its own. Every fault verb returns
/// once the fault is in effect: a request sent after it sees the fault. Verbs are not
/// thread-safe: drive one member from one thread at a time (clients under test may of
/// course talk to it from any thread).
///
/// A verb a member's kind cannot do throws std::logic_error naming the member and why:
/// cut(), heal(), slow() and reset_connections() need a fault proxy, which only a
/// standalone member has (a Sentinel group's or a cluster's servers announce their own
/// addresses, so clients would go around a proxy); fail_over() needs a replica, which a
/// standalone member does not have; set_clock() needs a standalone member of a fleet with
/// FleetOptions::fake_clock; partition(), heal_partition() need a fleet with
/// FleetOptions::network_namespaces, whose members have no proxy.
class Member {
 public:
  /// @cond INTERNAL
  // Made by Fleet only; Impl is the library's own.
  struct Impl;
  explicit Member(std::unique_ptr<Impl> impl);
  /// @endcond
  /// Kills its processes (SIGKILL, after SIGCONT when paused) and closes the proxy.
  ~Member();
  Member(const Member&) = delete;
  Member& operator=(const Member&) = delete;

  /// Its index in the Fleet.
  std::size_t index() const;
  /// What it is.
  MemberKind kind() const;
  /// The URL clients use (see MemberKind): a standalone member's proxy
  /// ("redis://127.0.0.1:<proxy_port()>") when the fleet has proxies, else direct_url().
  std::string url() const;
  /// A standalone member's "redis://127.0.0.1:<port()>", the server itself past any
  /// proxy; with FleetOptions::network_namespaces "redis://<address()>:<port()>"; url()
  /// for the other kinds.
  std::string direct_url() const;
  /// With FleetOptions::network_namespaces, the member's address on its link to the test
  /// process (the client hosts reach it by addresses of their own: ClientHost::urls());
  /// "127.0.0.1" otherwise.
  std::string address() const;
  /// A standalone member's server port, which it keeps across restart(); a Sentinel
  /// group's current master's (as the sentinels name it); a cluster's first server's.
  std::uint16_t port() const;
  /// The proxy's port; 0 when the member has none.
  std::uint16_t proxy_port() const;
  /// Its directory (each server's redis.log, append-only file, ...).
  std::string dir() const;
  /// The last `lines` lines of its log (of every server's, for a group or a cluster), for
  /// a test's failure message.
  std::string log_tail(std::size_t lines = 20) const;

  /// A standalone member's server pid, a Sentinel group's current master's; -1 while that
  /// is dead, and always for a cluster.
  pid_t pid() const;
  /// False after kill() until restart(), or when a data server died on its own.
  bool running() const;
  /// Between pause() and resume().
  bool paused() const;

  /// SIGSTOP, returning once the process is stopped: it keeps its connections and its
  /// keys but answers nothing, like a node in a long GC pause or a frozen VM. A Sentinel
  /// group's sentinels fail a paused master over after MemberSpec::down_after.
  void pause();
  /// SIGCONT to what pause() stopped, returning once it runs again; it answers what was
  /// sent meanwhile.
  void resume();
  /// SIGKILL, returning once the process is gone; its port refuses connections (through
  /// the proxy: connections are accepted, then closed). Its directory is kept for
  /// restart(). A Sentinel group's sentinels fail a killed master over after
  /// MemberSpec::down_after; a cluster's replicas cannot, with every master gone.
  void kill();
  /// Starts the server again on the same port (killing it first when it runs) and returns
  /// once it answers PING with its data loaded; for a Sentinel group or a cluster, every
  /// data server that is down, or the current master (every master) when none is. Throws
  /// std::invalid_argument for `{.persistence = true}` in a fleet without persistence,
  /// std::runtime_error (with the log's tail) when it does not come up.
  void restart(RestartOptions options = {});
  /// Hands the master's role to a replica and returns once it is in effect: for a
  /// Sentinel group, SENTINEL FAILOVER, returning once every sentinel names the new
  /// master and it answers ROLE as a master (the old master is demoted a little later);
  /// for a cluster, CLUSTER FAILOVER on a replica of every shard, returning once every
  /// server agrees on the slots' new owners. Throws std::logic_error for a standalone
  /// member or a cluster without replicas, std::runtime_error when it does not complete
  /// within 20 s.
  void fail_over();

  /// Partitions the member: its proxy accepts connections but carries no byte either way
  /// (bytes in flight are lost), so clients time out rather than get an error.
  void cut();
  /// Undoes cut() and slow(): bytes flow again without added delay. Connections that lost
  /// bytes to the cut are reset, as a real connection would die of its lost segments.
  void heal();
  /// Delays every reply of the member by `delay` (requests reach the server at once, so
  /// a command takes effect before the client hears of it); 0 removes the delay.
  void slow(std::chrono::milliseconds delay);
  /// Closes every client connection through the proxy with an RST; new connections are
  /// accepted as before.
  void reset_connections();

  /// With FleetOptions::network_namespaces: cuts the member off from the test process and
  /// from every client host, in the kernel (see Partition), and returns once in effect.
  /// The server itself runs on, and the fleet still talks to it past the links (a unix
  /// socket): restart(), set_clock() work during a partition. Both flavours may be in
  /// effect at once; one already in effect is left as it is. A flapping link is
  /// partition() and heal_partition() in turn, from a thread of the test's.
  void partition(Partition how = Partition::silent);
  /// Undoes partition(), both flavours, on every link of the member, and returns once the
  /// test process and every client host connect to its port again (or are refused by a
  /// member that is down). A connection that lost packets meanwhile recovers through TCP's
  /// retransmissions, or was given up by its client, as on a real network. Throws
  /// std::runtime_error when a link does not carry again within 5 s.
  void heal_partition();
  /// Whether a partition() of it is in effect, or a ClientHost::partition() from it.
  bool partitioned() const;

  /// Moves the server's wall clock (what TIME answers and what expires keys) to `offset`
  /// from the real one, running at `rate` times its speed from its current reading, and
  /// returns once TIME says so. {0ms, 1.0} is the real clock again. The monotonic clock
  /// is left alone. Throws std::invalid_argument for a rate that is not positive.
  void set_clock(std::chrono::milliseconds offset, double rate = 1.0);

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace redlock::testing

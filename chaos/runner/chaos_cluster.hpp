#pragma once
// The system under test of one scenario: N lock nodes (real redis-server processes), a
// FaultProxy in front of each (clients only ever see the proxies), a separate Redis as the
// fenced store (never faulted: it stands for the application's database), and a clock
// control file for each node started under the fake clock. A member may instead be a
// Sentinel group or a Redis Cluster (tests/support's fixtures), which clients reach
// directly: both announce their servers' own addresses, so no proxy can stand in front,
// and their faults are the processes' own (pause, kill, failover, resharding).
//
// Not thread-safe: the runner's main thread starts it and runs every action (the nodes
// die with the thread that started them, see redis_server.hpp).

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "proxy/fault_proxy.hpp"
#include "support/redis_server.hpp"
#include "support/sentinel_group.hpp"
#include "support/sharded_cluster.hpp"

namespace redlock::chaos {

enum class MemberKind { standalone, sentinel_group, redis_cluster };

/// What one member is, when it is not a standalone master.
struct MemberSettings {
  MemberKind kind = MemberKind::standalone;
  /// A Sentinel group's replicas. One, where clients use replicas_to_ack 1: with two, one
  /// not yet re-pointed by the sentinels still acknowledges the old master (docs/safety.md,
  /// "Sentinel groups").
  std::size_t replicas = 1;
  std::size_t sentinels = 3;
  /// A Redis Cluster's shards, and replicas of each (0: no failover possible).
  std::size_t shards = 3;
  std::size_t replicas_per_shard = 0;
};

struct ClusterSettings {
  std::size_t nodes = 5;
  /// appendonly yes + appendfsync always: a node killed with -9 keeps its locks.
  bool appendonly = false;
  /// Nodes started under libredlock_fakeclock.so, so that set_clock() works on them.
  std::vector<std::size_t> fake_clock_nodes;
  /// Nodes with a replica (not under the fake clock), whose replication link runs through
  /// a fault proxy of its own: see pause_replication() and fail_over(). Each also has a
  /// second client proxy (second_url()), for split().
  std::vector<std::size_t> replicated_nodes;
  /// The members that are not standalone masters, by node index (shorter than `nodes`,
  /// or empty: the rest are). appendonly applies to their servers too.
  std::vector<MemberSettings> members;
};

class ChaosCluster {
 public:
  /// Starts everything; `dir` holds the clock control files. Throws std::runtime_error.
  ChaosCluster(const ClusterSettings& settings, const std::string& dir,
               const std::string& fake_clock_library);
  ~ChaosCluster();

  std::size_t size() const { return nodes_.size(); }
  /// The lock nodes as clients must see them: through the proxies (a Sentinel group's or
  /// a cluster's own URL for such a member).
  std::vector<std::string> urls() const;
  std::string store_url() const { return store_->url(); }

  /// Throws std::logic_error for a Sentinel group or cluster member, which has none.
  FaultProxy& proxy(std::size_t node);
  /// Throw std::logic_error for a member of another kind.
  test::SentinelGroup& sentinel_group(std::size_t node);
  test::ShardedCluster& redis_cluster(std::size_t node);
  /// A replicated node's second client proxy: the same server as urls() shows, except
  /// during a split(). Throws std::logic_error for a node without a replica.
  std::string second_url(std::size_t node) const;
  /// The node's server; for a replicated node, its master at the time (the old one during
  /// a split()); for a Sentinel group, the master its sentinels name. Throws
  /// std::logic_error for a cluster member.
  test::RedisServer& node(std::size_t node);
  /// Partitions a replicated node's replication link: its replica misses every write
  /// from now until the next fail_over().
  void pause_replication(std::size_t node);
  /// Promotes the replicas of replicated nodes (REPLICAOF NO ONE) and moves each node's
  /// proxy to its replica, closing the clients' connections, as Sentinel or an operator
  /// would; all of them first, so the clients meet the new servers together. Then each
  /// old master becomes its new master's replica (its data replaced by a full sync) over
  /// the healed link. Returns once those syncs are done, or after 5 s each.
  void fail_over(const std::vector<std::size_t>& nodes);
  /// Two masters for one member: promotes the node's replica (REPLICAOF NO ONE) and moves
  /// the node's second proxy to it, closing that proxy's connections, while the old master
  /// stays a master behind the first proxy, with no replica left (the promoted one no
  /// longer replicates from it). What a failover looks like while some clients have not
  /// learnt of it, or the sentinels cannot reach the old master to demote it.
  /// Throws std::logic_error for a node without a replica or one split already.
  void split(std::size_t node);
  /// Ends a split(): moves the first proxy to the new master, closing its connections,
  /// and makes the old master the new one's replica (its data replaced by a full sync)
  /// over the link. Returns once that sync is done, or after 5 s.
  void heal(std::size_t node);
  /// kill -9, then start again on the same port (with its fake clock, if it had one).
  /// Standalone members only (std::logic_error otherwise).
  void kill9(std::size_t node);
  void restart(std::size_t node);
  /// Rewrites the node's clock file: wall clock `offset_ms` ahead, running at `rate`.
  void set_clock(std::size_t node, long long offset_ms, double rate);

 private:
  std::unique_ptr<test::RedisServer> start(std::size_t node,
                                           const test::RedisServerOptions& options);
  bool has_fake_clock(std::size_t node) const;
  /// Throws std::logic_error for a node without a replica.
  FaultProxy& replication_link(std::size_t node);
  std::string clock_file(std::size_t node) const;
  MemberKind kind(std::size_t node) const;
  /// Throws std::logic_error for a Sentinel group or cluster member.
  test::RedisServer& standalone(std::size_t node);

  ClusterSettings settings_;
  std::string dir_;
  std::string fake_clock_library_;
  std::unique_ptr<test::RedisServer> store_;
  std::vector<std::unique_ptr<test::RedisServer>> nodes_;
  // Indexed by node, null for a node without a replica.
  std::vector<std::unique_ptr<test::RedisServer>> replicas_;
  std::vector<std::unique_ptr<FaultProxy>> links_;
  // Indexed by node, null for a member of another kind.
  std::vector<std::unique_ptr<test::SentinelGroup>> groups_;
  std::vector<std::unique_ptr<test::ShardedCluster>> clusters_;
  std::vector<bool> split_;
  // After the nodes, so that the proxies close their connections before the nodes die.
  // Null for a Sentinel group or cluster member.
  std::vector<std::unique_ptr<FaultProxy>> proxies_;
  // Indexed by node, null for a node without a replica.
  std::vector<std::unique_ptr<FaultProxy>> second_proxies_;
};

}  // namespace redlock::chaos

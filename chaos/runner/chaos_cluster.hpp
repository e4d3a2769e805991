#pragma once
// The system under test of one scenario: N lock nodes (real redis-server processes), a
// FaultProxy in front of each (clients only ever see the proxies), a separate Redis as the
// fenced store (never faulted: it stands for the application's database), and a clock
// control file for each node started under the fake clock.
//
// Not thread-safe: the runner's main thread starts it and runs every action (the nodes
// die with the thread that started them, see redis_server.hpp).

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "proxy/fault_proxy.hpp"
#include "support/redis_server.hpp"

namespace redlock::chaos {

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
};

class ChaosCluster {
 public:
  /// Starts everything; `dir` holds the clock control files. Throws std::runtime_error.
  ChaosCluster(const ClusterSettings& settings, const std::string& dir,
               const std::string& fake_clock_library);
  ~ChaosCluster();

  std::size_t size() const { return nodes_.size(); }
  /// The lock nodes as clients must see them: through the proxies.
  std::vector<std::string> urls() const;
  std::string store_url() const { return store_->url(); }

  FaultProxy& proxy(std::size_t node) { return *proxies_.at(node); }
  /// A replicated node's second client proxy: the same server as urls() shows, except
  /// during a split(). Throws std::logic_error for a node without a replica.
  std::string second_url(std::size_t node) const;
  /// The node's server; for a replicated node, its master at the time (the old one during
  /// a split()).
  test::RedisServer& node(std::size_t node) { return *nodes_.at(node); }
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

  ClusterSettings settings_;
  std::string dir_;
  std::string fake_clock_library_;
  std::unique_ptr<test::RedisServer> store_;
  std::vector<std::unique_ptr<test::RedisServer>> nodes_;
  // Indexed by node, null for a node without a replica.
  std::vector<std::unique_ptr<test::RedisServer>> replicas_;
  std::vector<std::unique_ptr<FaultProxy>> links_;
  std::vector<bool> split_;
  // After the nodes, so that the proxies close their connections before the nodes die.
  std::vector<std::unique_ptr<FaultProxy>> proxies_;
  // Indexed by node, null for a node without a replica.
  std::vector<std::unique_ptr<FaultProxy>> second_proxies_;
};

}  // namespace redlock::chaos

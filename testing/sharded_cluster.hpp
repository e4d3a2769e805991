#pragma once
// A real Redis Cluster: masters (and replicas where a failover is tested) from
// redis-server --cluster-enabled yes on free loopback ports, joined with redis-cli
// --cluster create, each a RedisServer (redis_server.hpp) stopped by pid when the cluster
// is destroyed. (RedisCluster there is N independent servers, a Redlock deployment; this
// is one Redis Cluster, one Redlock member.) A Fleet's cluster member, and the project's
// tests of clusters.
//
// Thread-safety: as RedisServer; create and destroy on the test's main thread.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "redis_server.hpp"

namespace redlock::testing::detail {

struct ShardedClusterOptions {
  /// Non-empty: the servers' directories go under it (server-<i>).
  std::string dir;
  /// Every server keeps an append-only file (RedisServerOptions::appendonly_always).
  bool persistence = false;
  std::size_t shards = 3;
  std::size_t replicas_per_shard = 0;
  /// Every server serves TLS only (RedisServerOptions::tls_only: port 0, the fixture's own
  /// commands over a unix socket) with tls-cluster and tls-replication yes, so the cluster
  /// bus and replication are TLS too; the cluster is created over TLS and url() becomes
  /// rediss-cluster://.
  bool tls = false;
  /// Appended to every server's command line (RedisServerOptions::extra_args).
  std::vector<std::string> server_args;
};

class ShardedCluster {
 public:
  /// Starts the servers, runs redis-cli --cluster create over them and waits until every
  /// server answers cluster_state:ok and names the same owner for every slot. Throws
  /// std::runtime_error, with redis-cli's output or the logs' tails, when the cluster does
  /// not form within 20 s. redis-cli is redis_cli_binary().
  explicit ShardedCluster(ShardedClusterOptions options = {});

  /// "redis-cluster://127.0.0.1:<p1>,127.0.0.1:<p2>,...", every server as a seed
  /// ("rediss-cluster://" with options.tls).
  std::string url() const;

  RedisServer& server(std::size_t i) { return *servers_.at(i); }
  std::size_t servers() const { return servers_.size(); }

  /// The server that owns `key`'s slot now (CLUSTER KEYSLOT and CLUSTER SLOTS, asked of
  /// the first server).
  RedisServer& owner_of(const std::string& key);
  /// The cluster's node id of `server` (CLUSTER MYID).
  std::string node_id(RedisServer& server);

  /// Moves `slot` with its keys to `to`, as redis-cli --cluster reshard does for one slot:
  /// SETSLOT IMPORTING on `to`, MIGRATING on the owner, MIGRATE of every key, then SETSLOT
  /// NODE on every master. Waits until every master names `to` as the owner.
  void move_slot(std::uint16_t slot, RedisServer& to);
  /// The first half of move_slot: the slot is migrating from its owner to `to` (the owner
  /// answers ASK for keys it no longer has). Keys are not moved.
  void begin_migration(std::uint16_t slot, RedisServer& to);

  /// The replica of `master` (ROLE), with replicas_per_shard > 0. Throws when it has none.
  RedisServer& replica_of(RedisServer& master);
  /// CLUSTER FAILOVER on `replica`: its master hands it the slots once it has caught up.
  /// Waits until `replica` says it is a master and every server agrees on the slots'
  /// owners.
  void fail_over_to(RedisServer& replica);

  /// Waits until every server agrees on every slot's owner and says cluster_state:ok.
  void wait_consistent();

 private:
  RedisServer& owner_of_slot(std::uint16_t slot);

  ShardedClusterOptions options_;
  std::vector<std::unique_ptr<RedisServer>> servers_;
};

}  // namespace redlock::testing::detail

#pragma once
// A real Sentinel group: a master, its replicas (redis-server --replicaof) and sentinels
// (redis-server --sentinel) watching it, all on free loopback ports, each a RedisServer
// (redis_server.hpp) with its own directory, stopped by pid when the group is destroyed.
// Timings are small so that a failover takes a second or two. A Fleet's Sentinel member,
// and the project's tests of Sentinel groups.
//
// Thread-safety: as RedisServer; create and destroy on the test's main thread.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "redis_server.hpp"

namespace redlock::testing::detail {

struct SentinelGroupOptions {
  /// Non-empty: the servers' directories go under it (server-<i>, sentinel-<i>).
  std::string dir;
  /// Every data server keeps an append-only file (RedisServerOptions::appendonly_always).
  bool persistence = false;
  std::string master_name = "redlock";
  std::size_t replicas = 2;
  std::size_t sentinels = 3;
  /// Sentinels that must agree the master is down before a failover (sentinel monitor).
  std::size_t quorum = 2;
  int down_after_ms = 500;
  int failover_timeout_ms = 2000;
  /// Non-empty: the sentinels require this password of clients (and of each other).
  std::string sentinel_password;
  /// Every server and sentinel serves TLS only (RedisServerOptions::tls_only: port 0, the
  /// fixture's own commands over a unix socket) with tls-replication yes, so replication
  /// and the sentinels' links to the servers and to each other are TLS too; url() becomes
  /// rediss-sentinel://.
  bool tls = false;
  /// Appended to every data server's command line (RedisServerOptions::extra_args).
  std::vector<std::string> server_args;
  /// Appended to every sentinel's command line: `--user ...` there is a user of the
  /// sentinels' own ACL.
  std::vector<std::string> sentinel_args;
};

class SentinelGroup {
 public:
  /// Starts the master, then the replicas, waits until the master sees them all online,
  /// then starts the sentinels and waits until each of them knows every replica. Throws
  /// std::runtime_error, with the logs' tails, when the group does not form within 20 s.
  explicit SentinelGroup(SentinelGroupOptions options = {});

  /// "redis-sentinel://127.0.0.1:<s1>,127.0.0.1:<s2>,.../<master_name>"
  /// ("rediss-sentinel://" with options.tls).
  std::string url() const;
  const std::string& master_name() const { return options_.master_name; }

  /// Data servers: index 0 is the first master, then the replicas.
  RedisServer& server(std::size_t i) { return *servers_.at(i); }
  std::size_t servers() const { return servers_.size(); }
  RedisServer& sentinel(std::size_t i) { return *sentinels_.at(i); }
  std::size_t sentinel_count() const { return sentinels_.size(); }

  /// The port that the first running sentinel names as the master.
  std::uint16_t named_master_port();
  /// The data server whose port named_master_port() is.
  RedisServer& master();

  /// How far failover() waits: until the sentinels switched (every running sentinel
  /// names another server, which answers ROLE master), or also until the old master was
  /// demoted (ROLE slave; the sentinels do that last, up to ten seconds later, when their
  /// periodic INFO finds it still a master).
  enum class Until { switched, demoted };

  /// SENTINEL FAILOVER on the first sentinel, then waits as `until` says. Returns the new
  /// master's port. Throws std::runtime_error on a refusal or when that takes over `limit`.
  std::uint16_t failover(Until until = Until::demoted,
                         std::chrono::milliseconds limit = std::chrono::seconds(20));

  /// Waits as failover() does, for a failover away from the master on port `before`
  /// that something else set off (the master killed, say).
  std::uint16_t wait_for_new_master(std::uint16_t before, Until until,
                                    std::chrono::milliseconds limit = std::chrono::seconds(20));

  /// server.command(argv), asked again once on an I/O error: a failover closes every
  /// client connection of the servers it reconfigures, the fixture's too.
  static Reply ask(RedisServer& server, std::vector<std::string> argv);

 private:
  void wait_replicas_online();
  void wait_sentinels_ready();
  std::string sentinel_config() const;

  SentinelGroupOptions options_;
  // Sentinels are destroyed first (declared last): a data server that dies before them
  // would otherwise set off a failover while the group is being taken down.
  std::vector<std::unique_ptr<RedisServer>> servers_;
  std::vector<std::unique_ptr<RedisServer>> sentinels_;
};

}  // namespace redlock::testing::detail

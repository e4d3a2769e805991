#pragma once
// A member with a replica, on real redis-server processes: the replica's link to its
// master runs through a fault proxy (cut it, and the replica misses writes), and the
// member's address is another one (retarget it, and clients move to another server).

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "proxy/fault_proxy.hpp"
#include "support/redis_server.hpp"

namespace redlock::test {

// The value of `name` in an INFO reply ("" when absent).
inline std::string info_field(const std::string& info, const std::string& name) {
  const auto at = info.find(name + ":");
  if (at == std::string::npos) return "";
  const auto begin = at + name.size() + 1;
  return info.substr(begin, info.find_first_of("\r\n", begin) - begin);
}

// Polls `server`'s INFO replication until `name` reads `value`, for up to 10 s.
inline bool replication_reads(RedisServer& server, const std::string& name,
                              const std::string& value) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (info_field(server.command({"INFO", "replication"}).str, name) != value) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// Polls the master's INFO replication until a replica is online, for up to 10 s: after a
// diskless full sync the master counts a replica (for WAIT) only from its first
// acknowledgement, up to a second after the replica says its link is up.
inline bool replica_online(RedisServer& master) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (master.command({"INFO", "replication"}).str.find("state=online") == std::string::npos) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// A master that serves a replica's full sync at once, not after the default 5 s wait.
inline RedisServerOptions quick_master() {
  return {.extra_args = {"--repl-diskless-sync-delay", "0"}};
}

// One member: a master with a replica whose link to it runs through `link`, and the
// address clients use, `address`, which points at the master until failover().
struct ReplicatedMember {
  RedisServer master{quick_master()};
  std::unique_ptr<chaos::FaultProxy> link =
      std::make_unique<chaos::FaultProxy>("127.0.0.1", master.port());
  // A quick master too: it may be promoted and get the old master as its replica.
  RedisServer replica{{.extra_args = {"--replicaof", "127.0.0.1", std::to_string(link->port()),
                                      "--repl-diskless-sync-delay", "0"}}};
  std::unique_ptr<chaos::FaultProxy> address =
      std::make_unique<chaos::FaultProxy>("127.0.0.1", master.port());

  // The proxies' loop threads are joined before either server is stopped: a server's
  // teardown reuses descriptor numbers a loop thread still running may have used, which
  // ThreadSanitizer reports as a race.
  ~ReplicatedMember() {
    address.reset();
    link.reset();
  }

  std::string url() const { return "redis://127.0.0.1:" + std::to_string(address->port()); }

  // REPLICAOF NO ONE on the replica, then the member's address moved to it.
  void failover() {
    ASSERT_TRUE(replica.command({"REPLICAOF", "NO", "ONE"}).is_status("OK"));
    address->retarget("127.0.0.1", replica.port());
  }
};

}  // namespace redlock::test

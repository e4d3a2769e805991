// Scripts without a local digest (SHA-1 unavailable to this process, as in a FIPS
// configuration) against real redis-server processes, five masters and a cluster of
// three shards: locks and semaphores work, and after a script's first use on a
// connection it goes out as EVALSHA with the digest the server gave, not as a full EVAL
// per call.

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <chrono>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "scripts/election_scripts.hpp"
#include "scripts/kind_scripts.hpp"
#include "scripts/lock_scripts.hpp"
#include "support/lock_nodes_fixture.hpp"
#include "support/sharded_cluster.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;

// Each script is made once per process, at its first use: made here, before any test,
// while OpenSSL's default properties ask for FIPS algorithms, which no provider loaded
// here offers, the scripts get no SHA-1. The properties are restored at once: the lock
// values' random bytes need the default provider too.
class ScriptsWithoutSha1 : public ::testing::Environment {
 public:
  void SetUp() override {
    ASSERT_EQ(EVP_default_properties_enable_fips(nullptr, 1), 1);
    for (const auto* script : {&scripts::acquire(),
                               &scripts::release(),
                               &scripts::shard_release(),
                               &scripts::quiet_release(),
                               &scripts::extend(),
                               &scripts::fence(),
                               &scripts::inspect(),
                               &scripts::fenced_write(),
                               &scripts::proclaim(),
                               &scripts::leader_read(),
                               &scripts::semaphore_acquire(),
                               &scripts::semaphore_extend(),
                               &scripts::semaphore_release(),
                               &scripts::rw_acquire(),
                               &scripts::rw_extend(),
                               &scripts::rw_release(),
                               &scripts::rw_fence(),
                               &scripts::key_inspect(),
                               &scripts::multi_acquire(),
                               &scripts::multi_extend(),
                               &scripts::multi_release(),
                               &scripts::multi_fence()}) {
      EXPECT_EQ(script->sha1, "") << script->name << " was made with SHA-1 available";
    }
    EVP_default_properties_enable_fips(nullptr, 0);
  }
};
const auto* const scripts_without_sha1 =
    ::testing::AddGlobalTestEnvironment(new ScriptsWithoutSha1);

// Calls of `command` (as INFO commandstats names it) served by `servers` since they
// started.
long long calls_on(const std::vector<test::RedisServer*>& servers, std::string_view command) {
  long long total = 0;
  for (test::RedisServer* server : servers) {
    const std::string info = server->command({"INFO", "commandstats"}).str;
    const std::string field = "cmdstat_" + std::string(command) + ":calls=";
    const auto at = info.find(field);
    if (at != std::string::npos) total += std::stoll(info.substr(at + field.size()));
  }
  return total;
}

class ScriptDigestTest : public test::LockNodesTest {
 protected:
  /// Script calls served by the five nodes, once every node answered the last operation
  /// (operations return at their quorum-th reply).
  static long long settled_calls(std::string_view command) {
    long long last = -1;
    for (;;) {
      std::this_thread::sleep_for(100ms);
      const long long now = calls({command});
      if (now == last) return now;
      last = now;
    }
  }

  /// A lock with a fencing token (the acquire script, then the fence script), extended
  /// and released; a semaphore's permit, extended and released.
  static void cycle(Client& client, int i) {
    LockOptions fenced{.ttl = 10s};
    fenced.fencing = true;
    auto lock = client.lock("lock:" + std::to_string(i % 3), fenced);
    ASSERT_TRUE(lock) << lock.error().message();
    ASSERT_TRUE(lock->extend(10s));
    ASSERT_TRUE(lock->unlock());
    auto permit = client.acquire_permit("pool", {.permits = 2, .lock = {.ttl = 10s}});
    ASSERT_TRUE(permit) << permit.error().message();
    ASSERT_TRUE(permit->extend(10s));
    ASSERT_TRUE(permit->unlock());
  }
};

TEST_F(ScriptDigestTest, ScriptsGoOutAsEvalshaAfterTheirFirstUseOnAConnection) {
  auto client = Client::create(options());
  ASSERT_TRUE(client);
  // The first uses: EVAL on each connection, and the digests asked for.
  for (int i = 0; i < 3; ++i) {
    cycle(*client, i);
    if (HasFatalFailure()) return;
  }
  const long long eval_before = settled_calls("eval");
  const long long evalsha_before = settled_calls("evalsha");
  const long long loads_before = settled_calls("script|load");
  EXPECT_GT(loads_before, 0) << "the digests were asked of the servers";
  constexpr int cycles = 20;
  for (int i = 0; i < cycles; ++i) {
    cycle(*client, i);
    if (HasFatalFailure()) return;
  }
  const long long evals = settled_calls("eval") - eval_before;
  const long long evalshas = settled_calls("evalsha") - evalsha_before;
  const long long loads = settled_calls("script|load") - loads_before;
  std::cout << "first uses: " << eval_before << " EVAL, " << loads_before << " SCRIPT LOAD; over "
            << cycles << " cycles on 5 nodes: " << evals << " EVAL, " << evalshas << " EVALSHA, "
            << loads << " SCRIPT LOAD\n";
  EXPECT_EQ(evals, 0) << "scripts were sent in full after their first use";
  EXPECT_EQ(loads, 0) << "a digest was asked again";
  // Per cycle and node at least: acquire, fence, extend and release of the lock; acquire,
  // extend and release of the permit.
  EXPECT_GE(evalshas, cycles * 5 * 7);
}

// A Redis Cluster member: each shard's connection takes the digests from its own server,
// and a lock whose slot moved is followed there (the redirected command goes out as EVAL).
TEST(ScriptDigestCluster, EachShardTakesTheDigestsFromItsServer) {
  test::ShardedCluster cluster;
  std::vector<test::RedisServer*> servers;
  for (std::size_t i = 0; i < cluster.servers(); ++i) servers.push_back(&cluster.server(i));
  Options options;
  options.nodes = {cluster.url()};
  auto client = Client::create(options);
  // Keys whose slots lie on each of the three shards.
  const std::vector<std::string> keys = {"cluster:a", "cluster:b", "cluster:c", "cluster:d"};
  auto cycle = [&] {
    for (const auto& key : keys) {
      auto lock = client->lock(key, {.ttl = 10s, .fencing = true});
      ASSERT_TRUE(lock) << lock.error().message();
      ASSERT_TRUE(lock->extend(10s));
      ASSERT_TRUE(lock->unlock());
    }
  };
  cycle();
  if (HasFatalFailure()) return;
  const long long loads = calls_on(servers, "script|load");
  EXPECT_GE(loads, 3) << "every shard was asked";
  const long long evals = calls_on(servers, "eval");
  const long long evalshas = calls_on(servers, "evalsha");
  for (int i = 0; i < 10; ++i) {
    cycle();
    if (HasFatalFailure()) return;
  }
  std::cout << "cluster, 10 cycles of 4 keys: " << calls_on(servers, "eval") - evals << " EVAL, "
            << calls_on(servers, "evalsha") - evalshas << " EVALSHA\n";
  EXPECT_EQ(calls_on(servers, "eval"), evals);
  EXPECT_EQ(calls_on(servers, "script|load"), loads);
  // Acquire, fence, extend and release of each key, each on its own shard's master.
  EXPECT_EQ(calls_on(servers, "evalsha") - evalshas, 10 * 4 * 4);

  // The slot of a key moves to another shard: the client follows it and keeps locking.
  test::RedisServer& owner = cluster.owner_of("cluster:a");
  test::RedisServer& other = &owner == &cluster.server(0) ? cluster.server(1) : cluster.server(0);
  cluster.move_slot(
      static_cast<std::uint16_t>(owner.command({"CLUSTER", "KEYSLOT", "cluster:a"}).integer),
      other);
  for (int i = 0; i < 3; ++i) {
    cycle();
    if (HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace redlock

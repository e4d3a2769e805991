// Sentinel groups and Redis Clusters as members over TLS, against real servers that serve
// TLS (with tls-replication, and tls-cluster for the cluster bus): a fenced lock, extend
// and release on a rediss-sentinel:// member and on a rediss-cluster:// member with a key
// on each shard and a slot moved while held, a Sentinel failover and a shard failover
// followed, and a plain-text client and an untrusted CA refused with errors naming the
// member. Every server serves TLS only (port 0), as such deployments run.
//
// One group (a master, one replica, three sentinels) and one cluster of three shards are
// shared by the suite; the shard failover has a cluster of its own with replicas.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>

#include <redlock/redlock.hpp>

#include "support/redis_server.hpp"
#include "support/sentinel_group.hpp"
#include "support/sharded_cluster.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

class TlsMembersTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    test::SentinelGroupOptions group;
    group.master_name = "tls-group";
    group.replicas = 1;
    group.tls = true;
    group_ = new test::SentinelGroup(group);
    test::ShardedClusterOptions cluster;
    cluster.tls = true;
    cluster_ = new test::ShardedCluster(cluster);
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
    delete group_;
    group_ = nullptr;
  }

  static Options tls_options(const std::string& member) {
    Options options;
    options.nodes = {member};
    // One member alone: a Sentinel group's two masters would be the whole vote; these
    // tests are about TLS, and create() refuses the group without a remedy otherwise.
    options.member_guard.allow_two_masters = true;
    const auto& files = test::test_certificates();
    options.tls.ca_file = files.ca_cert;
    options.tls.cert_file = files.client_cert;
    options.tls.key_file = files.client_key;
    // The first round also shakes hands with the sentinels, the master or every shard.
    options.node_timeout = 2s;
    return options;
  }

  // `key` on `server` once it reads `expected`, or after a second: the client's reply
  // and the fixture's plain connection race.
  static std::string settled(test::RedisServer& server, const std::string& key,
                             const std::string& expected) {
    std::string value;
    for (int tries = 0; tries < 1000; ++tries) {
      value = test::SentinelGroup::ask(server, {"GET", key}).str;
      if (value == expected) break;
      std::this_thread::sleep_for(1ms);
    }
    return value;
  }

  // Extends `lock` to 30 s until `server` holds it so, for up to two seconds: after a
  // failover the first extends may still meet the old master. "" when it did, else why not.
  static std::string extend_onto(Lock& lock, test::RedisServer& server) {
    std::string last;
    for (int tries = 0; tries < 200; ++tries) {
      auto result = lock.extend(30s);
      last = result ? "granted, not on the server" : result.error().message();
      if (result && test::SentinelGroup::ask(server, {"PTTL", lock.resource()}).integer > 25000) {
        return {};
      }
      std::this_thread::sleep_for(10ms);
    }
    return "the extend did not reach port " + std::to_string(server.port()) + "; last: " + last;
  }

  static test::SentinelGroup* group_;
  static test::ShardedCluster* cluster_;
};

test::SentinelGroup* TlsMembersTest::group_ = nullptr;
test::ShardedCluster* TlsMembersTest::cluster_ = nullptr;

TEST_F(TlsMembersTest, ASentinelGroupOverTlsGrantsExtendsAndReleasesAFencedLock) {
  ASSERT_THAT(group_->url(), ::testing::StartsWith("rediss-sentinel://"));
  auto client = Client::create(tls_options(group_->url()));
  const std::string key = "tls:sentinel";
  auto lock = client->lock(key, {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(lock) << lock.error().message();
  ASSERT_TRUE(lock->fencing_token());
  test::RedisServer& master = group_->master();
  EXPECT_EQ(settled(master, key, lock->value()), lock->value());
  EXPECT_FALSE(test::SentinelGroup::ask(master, {"GET", key + ":fence"}).is_nil());
  auto contender = client->try_lock(key, 10s);
  ASSERT_FALSE(contender);
  EXPECT_EQ(contender.error(), errc::conflict) << contender.error().message();

  ASSERT_TRUE(lock->extend(20s));
  EXPECT_GT(test::SentinelGroup::ask(master, {"PTTL", key}).integer, 15000);
  ASSERT_TRUE(lock->unlock());
  EXPECT_EQ(settled(master, key, ""), "");
}

TEST_F(TlsMembersTest, AClusterOverTlsGrantsExtendsAndReleasesOnEveryShardAndFollowsMoved) {
  ASSERT_THAT(cluster_->url(), ::testing::StartsWith("rediss-cluster://"));
  // One key per shard, so that each shard's connection is a TLS one.
  std::map<test::RedisServer*, std::string> key_on;
  for (int i = 0; key_on.size() < 3 && i < 100; ++i) {
    const std::string key = "tls:cluster:" + std::to_string(i);
    key_on.emplace(&cluster_->owner_of(key), key);
  }
  ASSERT_EQ(key_on.size(), 3u);

  // Counts the MOVED answers the member followed: with the slot map read, none until a
  // slot moves.
  struct MovedCounter : Observer {
    std::atomic<int> moved{0};
    void on_node(const NodeEvent& event) override { moved += event.kind == NodeEventKind::moved; }
  };
  auto counter = std::make_shared<MovedCounter>();
  Options options = tls_options(cluster_->url());
  options.observer = counter;
  auto client = Client::create(options);
  for (const auto& [owner, key] : key_on) {
    auto lock = client->lock(key, {.ttl = 10s, .fencing = true});
    ASSERT_TRUE(lock) << key << ": " << lock.error().message();
    ASSERT_TRUE(lock->fencing_token());
    EXPECT_EQ(settled(*owner, key, lock->value()), lock->value()) << key;
    EXPECT_FALSE(owner->command({"GET", "{" + key + "}:fence"}).is_nil()) << key;
    ASSERT_TRUE(lock->extend(20s)) << key;
    EXPECT_GT(owner->command({"PTTL", key}).integer, 15000) << key;
    ASSERT_TRUE(lock->unlock()) << key;
    EXPECT_EQ(settled(*owner, key, ""), "") << key;
  }
  EXPECT_EQ(counter->moved, 0) << "the slot map of TLS-only servers was not read";

  // A held key's slot moved to another shard: the extend follows MOVED, which names the
  // new owner's TLS port to a TLS connection.
  const std::string key = key_on.begin()->second;
  auto lock = client->lock(key, {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(lock) << lock.error().message();
  test::RedisServer& to = *std::next(key_on.begin())->first;
  const auto slot =
      static_cast<std::uint16_t>(cluster_->server(0).command({"CLUSTER", "KEYSLOT", key}).integer);
  cluster_->move_slot(slot, to);
  ASSERT_EQ(&cluster_->owner_of(key), &to);
  auto extended = lock->extend(20s);
  ASSERT_TRUE(extended) << extended.error().message();
  EXPECT_GT(to.command({"PTTL", key}).integer, 15000);
  EXPECT_EQ(counter->moved, 1);
  ASSERT_TRUE(lock->unlock());
  EXPECT_EQ(settled(to, key, ""), "");
}

TEST_F(TlsMembersTest, APlainTextClientOfATlsMemberIsRefusedNamingTheMember) {
  // The same servers named with the plain-text schemes: every port in the URLs serves TLS.
  std::string sentinel_url = group_->url();
  sentinel_url.replace(0, std::string("rediss").size(), "redis");
  std::string cluster_url = cluster_->url();
  cluster_url.replace(0, std::string("rediss").size(), "redis");
  for (const std::string& member : {sentinel_url, cluster_url}) {
    Options options = tls_options(member);
    options.connect_timeout = 500ms;
    auto client = Client::create(options);
    auto lock = client->lock("tls:plain", {.ttl = 10s});
    ASSERT_FALSE(lock) << member;
    const std::string message = lock.error().message();
    EXPECT_THAT(message, HasSubstr(member));
    EXPECT_THAT(message, HasSubstr("if the port serves TLS, use a rediss"));
  }
}

// A CA that signed neither the sentinels' nor the shards' certificates: the failure is
// the handshake's, with the sentinel or the seed named beside the member.
TEST_F(TlsMembersTest, AnUntrustedCertificateIsATlsErrorNamingTheSentinelOrTheSeed) {
  const std::string first_sentinel =
      "127.0.0.1:" + std::to_string(group_->sentinel(0).port()) + " (master 'tls-group')";
  const std::string first_seed = "127.0.0.1:" + std::to_string(cluster_->server(0).port());
  // A group's look-up reports each sentinel's failure in a connection_error of its own.
  for (const auto& [member, named, code] :
       {std::tuple{group_->url(), "sentinel " + first_sentinel, errc::connection_error},
        std::tuple{cluster_->url(), first_seed, errc::tls_error}}) {
    Options options = tls_options(member);
    options.tls.ca_file = test::test_certificates().other_ca_cert;
    auto client = Client::create(options);
    auto lock = client->lock("tls:untrusted", {.ttl = 10s});
    ASSERT_FALSE(lock) << member;
    ASSERT_EQ(lock.error().nodes().size(), 1u);
    const NodeOutcome& outcome = lock.error().nodes()[0];
    EXPECT_EQ(outcome.node, member);
    EXPECT_EQ(outcome.error, make_error_code(code)) << outcome.detail;
    EXPECT_THAT(outcome.detail,
                HasSubstr("TLS handshake with " + named + " failed: certificate verify failed"));
  }
}

// A failover over TLS: the replica the sentinels promote is named at the TLS port it
// announced (tls-replication), and the held lock is extended and released there.
TEST_F(TlsMembersTest, ASentinelGroupOverTlsIsFollowedThroughAFailover) {
  // The guard would not count the promoted replica's grants for the bound (a failover may
  // lose writes; sentinel_test covers that): off, the test sees the follow alone.
  Options options = tls_options(group_->url());
  options.member_guard.observed_restarts = false;
  auto client = Client::create(options);
  const std::string key = "tls:failover";
  auto lock = client->lock(key, {.ttl = 20s, .fencing = true});
  ASSERT_TRUE(lock) << lock.error().message();
  test::RedisServer& old_master = group_->master();
  ASSERT_EQ(settled(old_master, key, lock->value()), lock->value());

  const std::uint16_t new_port = group_->failover(test::SentinelGroup::Until::switched);
  test::RedisServer& new_master = group_->master();
  ASSERT_EQ(new_master.port(), new_port);
  ASSERT_NE(&new_master, &old_master);

  ASSERT_EQ(extend_onto(*lock, new_master), "");
  ASSERT_TRUE(lock->unlock());
  EXPECT_EQ(settled(new_master, key, ""), "");
}

// A shard of a TLS cluster fails over (CLUSTER FAILOVER on its replica): the old master's
// MOVED and the slot map name the promoted replica's TLS port, and the held lock is
// extended and released there. A cluster of its own, with a replica per shard.
TEST_F(TlsMembersTest, AShardFailoverOverTlsIsFollowedToThePromotedReplica) {
  test::ShardedCluster cluster({.shards = 3, .replicas_per_shard = 1, .tls = true});
  const std::string key = "tls:shard-failover";
  test::RedisServer& old_master = cluster.owner_of(key);
  test::RedisServer& replica = cluster.replica_of(old_master);
  // The promoted replica is guarded for the bound (it may lack writes); off, the test
  // sees the follow alone.
  Options options = tls_options(cluster.url());
  options.member_guard.observed_restarts = false;
  auto client = Client::create(options);
  auto lock = client->lock(key, {.ttl = 20s, .fencing = true});
  ASSERT_TRUE(lock) << lock.error().message();
  ASSERT_EQ(settled(old_master, key, lock->value()), lock->value());

  cluster.fail_over_to(replica);
  ASSERT_EQ(&cluster.owner_of(key), &replica);
  ASSERT_EQ(settled(replica, key, lock->value()), lock->value()) << "the replica lacked the key";

  ASSERT_EQ(extend_onto(*lock, replica), "");
  ASSERT_TRUE(lock->unlock());
  EXPECT_EQ(settled(replica, key, ""), "");
  auto again = client->lock(key, {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_GT(*again->fencing_token(), *lock->fencing_token());
  EXPECT_EQ(settled(replica, key, again->value()), again->value());
  ASSERT_TRUE(again->unlock());
}

}  // namespace
}  // namespace redlock

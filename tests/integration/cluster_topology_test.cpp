// The sans-I/O pieces of a cluster member (net/cluster_slot.hpp, net/cluster_map.hpp)
// against a real Redis Cluster of three shards: slots as CLUSTER KEYSLOT computes them,
// the slot map from real CLUSTER SHARDS and CLUSTER SLOTS replies, real MOVED and ASK
// redirections, and the fencing counter's name in its key's slot.

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "net/cluster_map.hpp"
#include "net/cluster_slot.hpp"
#include "scripts/lock_scripts.hpp"
#include "support/redis_server.hpp"
#include "support/sharded_cluster.hpp"

namespace redlock {
namespace {

struct ContextDeleter {
  void operator()(redisContext* context) const noexcept { redisFree(context); }
};
struct ReplyDeleter {
  void operator()(redisReply* reply) const noexcept { freeReplyObject(reply); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

// One command on a raw hiredis connection, for the redisReply the library reads.
ReplyPtr raw(test::RedisServer& server, const std::vector<std::string>& argv) {
  std::unique_ptr<redisContext, ContextDeleter> context(redisConnect("127.0.0.1", server.port()));
  if (!context || context->err) throw std::runtime_error("cannot connect to the cluster");
  std::vector<const char*> args;
  std::vector<std::size_t> lengths;
  for (const auto& arg : argv) {
    args.push_back(arg.data());
    lengths.push_back(arg.size());
  }
  void* reply =
      redisCommandArgv(context.get(), static_cast<int>(args.size()), args.data(), lengths.data());
  if (reply == nullptr) throw std::runtime_error("no reply from the cluster");
  return ReplyPtr(static_cast<redisReply*>(reply));
}

class ClusterTopologyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { cluster_ = new test::ShardedCluster(); }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }

  // A server that does not own `key`'s slot.
  static test::RedisServer& other_than_owner(const std::string& key) {
    test::RedisServer& owner = cluster_->owner_of(key);
    return &cluster_->server(0) == &owner ? cluster_->server(1) : cluster_->server(0);
  }

  static test::ShardedCluster* cluster_;
};

test::ShardedCluster* ClusterTopologyTest::cluster_ = nullptr;

TEST_F(ClusterTopologyTest, SlotsAreTheOnesTheClusterComputes) {
  std::vector<std::string> keys = {
      "foo", "{user1000}.following",        "foo{}{bar}", "foo{{bar}}zap", "a}{b}", "{", "}",
      "{}",  std::string("\0\xff{\x80}", 5)};
  std::mt19937 random(28);
  for (int i = 0; i < 200; ++i) {
    std::string key(1 + random() % 40, '\0');
    for (auto& byte : key) byte = static_cast<char>(random() % 256);
    keys.push_back(key);
  }
  for (const auto& key : keys) {
    const auto answer = raw(cluster_->server(0), {"CLUSTER", "KEYSLOT", key});
    ASSERT_EQ(answer->type, REDIS_REPLY_INTEGER);
    EXPECT_EQ(net::key_slot(key), answer->integer) << "key of " << key.size() << " bytes";
  }
}

TEST_F(ClusterTopologyTest, SlotMapsFromShardsAndSlotsNameEachSlotsOwner) {
  std::string problem;
  const auto shards = raw(cluster_->server(1), {"CLUSTER", "SHARDS"});
  const auto from_shards = net::SlotMap::from_shards(shards.get(), problem);
  ASSERT_TRUE(from_shards) << problem;
  const auto slots = raw(cluster_->server(2), {"CLUSTER", "SLOTS"});
  const auto from_slots = net::SlotMap::from_slots(slots.get(), problem);
  ASSERT_TRUE(from_slots) << problem;
  EXPECT_EQ(from_shards->masters().size(), 3u);
  EXPECT_EQ(from_shards->uncovered(), 0u);
  EXPECT_EQ(from_slots->uncovered(), 0u);
  for (std::uint16_t slot = 0; slot < net::cluster_slot_count; ++slot) {
    ASSERT_EQ(from_shards->owner(slot)->port, from_slots->owner(slot)->port) << slot;
    ASSERT_EQ(from_shards->owner(slot)->id, from_slots->owner(slot)->id) << slot;
  }
  // And the map agrees with the server that takes a key's writes.
  for (const std::string key : {"alpha", "beta", "gamma", "delta", "{x}y"}) {
    const auto* owner = from_shards->owner(net::key_slot(key));
    EXPECT_EQ(owner->port, cluster_->owner_of(key).port()) << key;
    EXPECT_EQ(owner->host, "127.0.0.1");
    EXPECT_EQ(owner->id, cluster_->node_id(cluster_->owner_of(key)));
  }
}

TEST_F(ClusterTopologyTest, MovedNamesTheOwnerOfTheKeysSlot) {
  const std::string key = "moved-key";
  const auto reply = raw(other_than_owner(key), {"SET", key, "v"});
  ASSERT_EQ(reply->type, REDIS_REPLY_ERROR);
  const auto redirect = net::parse_redirect({reply->str, reply->len});
  ASSERT_TRUE(redirect) << reply->str;
  EXPECT_EQ(redirect->kind, net::Redirect::Kind::moved);
  EXPECT_EQ(redirect->slot, net::key_slot(key));
  EXPECT_EQ(redirect->host, "127.0.0.1");
  EXPECT_EQ(redirect->port, cluster_->owner_of(key).port());
}

TEST_F(ClusterTopologyTest, AskNamesTheImportingServerAndMovedFollowsTheSlot) {
  const std::string key = "ask-key";
  const std::uint16_t slot = net::key_slot(key);
  test::RedisServer& owner = cluster_->owner_of(key);
  test::RedisServer& target = other_than_owner(key);
  ASSERT_EQ(raw(owner, {"SET", "{ask-key}held", "v", "PX", "60000"})->type, REDIS_REPLY_STATUS);
  cluster_->begin_migration(slot, target);
  // While migrating, the owner still serves the keys it has...
  EXPECT_EQ(raw(owner, {"GET", "{ask-key}held"})->type, REDIS_REPLY_STRING);
  // ...and sends those it does not have to the importing server.
  const auto reply = raw(owner, {"GET", key});
  ASSERT_EQ(reply->type, REDIS_REPLY_ERROR);
  const auto ask = net::parse_redirect({reply->str, reply->len});
  ASSERT_TRUE(ask) << reply->str;
  EXPECT_EQ(ask->kind, net::Redirect::Kind::ask);
  EXPECT_EQ(ask->slot, slot);
  EXPECT_EQ(ask->port, target.port());

  cluster_->move_slot(slot, target);
  // The held key went with its slot, its TTL with it; the old owner now answers MOVED.
  EXPECT_GT(raw(target, {"PTTL", "{ask-key}held"})->integer, 50000);
  const auto moved = raw(owner, {"GET", "{ask-key}held"});
  ASSERT_EQ(moved->type, REDIS_REPLY_ERROR);
  const auto redirect = net::parse_redirect({moved->str, moved->len});
  ASSERT_TRUE(redirect) << moved->str;
  EXPECT_EQ(redirect->kind, net::Redirect::Kind::moved);
  EXPECT_EQ(redirect->port, target.port());
}

TEST_F(ClusterTopologyTest, TheFencingCounterMustBeNamedInItsKeysSlot) {
  // The acquire script with fencing touches the lock and its counter in one call; a
  // cluster refuses that unless both hash to one slot.
  const std::string key = "orders:42";
  test::RedisServer& owner = cluster_->owner_of(key);
  const std::string source(scripts::acquire().source);
  const auto plain =
      raw(owner, {"EVAL", source, "2", key, key + scripts::fence_suffix, "v", "10000", "1"});
  ASSERT_EQ(plain->type, REDIS_REPLY_ERROR);
  EXPECT_NE(std::string(plain->str).find("CROSSSLOT"), std::string::npos) << plain->str;

  const auto companion = net::slot_companion(key, scripts::fence_suffix);
  ASSERT_TRUE(companion);
  const auto tagged = raw(owner, {"EVAL", source, "2", key, *companion, "v", "10000", "1"});
  ASSERT_EQ(tagged->type, REDIS_REPLY_ARRAY) << (tagged->str ? tagged->str : "");
  EXPECT_EQ(tagged->element[0]->integer, 1);  // granted, with a token
  EXPECT_EQ(tagged->element[1]->integer, 1);
}

}  // namespace
}  // namespace redlock

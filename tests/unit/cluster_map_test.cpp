// A cluster's slot map read from CLUSTER SHARDS and CLUSTER SLOTS replies (as RESP bytes
// through hiredis' reader), and the MOVED / ASK redirections (net/cluster_map.hpp).

#include "net/cluster_map.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::net {
namespace {

struct ReplyDeleter {
  void operator()(redisReply* reply) const noexcept { freeReplyObject(reply); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

ReplyPtr parse(const std::string& bytes) {
  redisReader* reader = redisReaderCreate();
  redisReaderFeed(reader, bytes.data(), bytes.size());
  void* object = nullptr;
  const int status = redisReaderGetReply(reader, &object);
  redisReaderFree(reader);
  if (status != REDIS_OK || object == nullptr) ADD_FAILURE() << "bad RESP in the test";
  return ReplyPtr(static_cast<redisReply*>(object));
}

std::string bulk(const std::string& text) {
  return "$" + std::to_string(text.size()) + "\r\n" + text + "\r\n";
}
std::string integer(long long value) {
  return ":" + std::to_string(value) + "\r\n";
}
std::string array(const std::vector<std::string>& items) {
  std::string out = "*" + std::to_string(items.size()) + "\r\n";
  for (const auto& item : items) out += item;
  return out;
}

// One node of a CLUSTER SHARDS reply as redis-server 7.0 sends it over RESP2.
std::string shard_node(const std::string& id, int port, const std::string& endpoint,
                       const std::string& role) {
  return array({bulk("id"), bulk(id), bulk("port"), integer(port), bulk("ip"), bulk("127.0.0.1"),
                bulk("endpoint"), bulk(endpoint), bulk("role"), bulk(role),
                bulk("replication-offset"), integer(0), bulk("health"), bulk("online")});
}

std::string shard(const std::vector<long long>& slots, const std::vector<std::string>& nodes) {
  std::vector<std::string> slot_items;
  for (const auto slot : slots) slot_items.push_back(integer(slot));
  return array({bulk("slots"), array(slot_items), bulk("nodes"), array(nodes)});
}

TEST(ClusterMapTest, ReadsClusterShardsWithTheMasterOfEachShard) {
  const auto reply = parse(array({
      shard({0, 5460}, {shard_node("a", 7000, "127.0.0.1", "master"),
                        shard_node("d", 7003, "127.0.0.1", "replica")}),
      shard({5461, 10922}, {shard_node("e", 7004, "127.0.0.1", "replica"),
                            shard_node("b", 7001, "127.0.0.1", "master")}),
      shard({10923, 12000, 12001, 16383}, {shard_node("c", 7002, "?", "master")}),
  }));
  std::string problem;
  const auto map = SlotMap::from_shards(reply.get(), problem);
  ASSERT_TRUE(map) << problem;
  ASSERT_EQ(map->masters().size(), 3u);
  EXPECT_EQ(map->uncovered(), 0u);
  EXPECT_EQ(map->owner(0)->port, 7000);
  EXPECT_EQ(map->owner(5460)->id, "a");
  // The replica listed first in its shard is not taken for the master.
  EXPECT_EQ(map->owner(5461)->port, 7001);
  EXPECT_EQ(map->owner(10922)->port, 7001);
  // An unknown endpoint ("?") falls back to the ip.
  EXPECT_EQ(map->owner(16383)->host, "127.0.0.1");
  EXPECT_EQ(map->owner(12001)->port, 7002);
}

// A server with `port 0` and a tls-port serves TLS only; redis-server 7.0 then names no
// "port" at all in CLUSTER SHARDS (seen on 7.0.15 with tls-cluster yes).
TEST(ClusterMapTest, ReadsClusterShardsOfServersThatServeTlsOnly) {
  auto tls_only = [](const std::string& id, int tls_port, const std::string& role) {
    return array({bulk("id"), bulk(id), bulk("tls-port"), integer(tls_port), bulk("ip"),
                  bulk("127.0.0.1"), bulk("endpoint"), bulk("127.0.0.1"), bulk("role"), bulk(role),
                  bulk("replication-offset"), integer(0), bulk("health"), bulk("online")});
  };
  const auto reply = parse(array({
      shard({0, 8191}, {tls_only("a", 7100, "master"), tls_only("c", 7102, "replica")}),
      shard({8192, 16383}, {tls_only("b", 7101, "master")}),
  }));
  std::string problem;
  const auto map = SlotMap::from_shards(reply.get(), problem);
  ASSERT_TRUE(map) << problem;
  EXPECT_EQ(map->uncovered(), 0u);
  EXPECT_EQ(map->owner(0)->tls_port, 7100);
  EXPECT_EQ(map->owner(16383)->tls_port, 7101);
  // The only port such a server has: a plain-text client meets TLS there and is told so.
  EXPECT_EQ(map->owner(0)->port, 7100);
}

TEST(ClusterMapTest, SlotsNoShardServesHaveNoOwner) {
  const auto reply = parse(array({shard({0, 99}, {shard_node("a", 7000, "h", "master")}),
                                  shard({}, {shard_node("b", 7001, "h", "master")})}));
  std::string problem;
  const auto map = SlotMap::from_shards(reply.get(), problem);
  ASSERT_TRUE(map) << problem;
  EXPECT_EQ(map->owner(100), nullptr);
  EXPECT_EQ(map->uncovered(), 16384u - 100u);
  // A master without slots yet is still a master of the cluster, but holds no keys (a
  // cluster just formed lists its replicas-to-be so).
  EXPECT_EQ(map->masters().size(), 2u);
  ASSERT_EQ(map->owners().size(), 1u);
  EXPECT_EQ(map->owners()[0].port, 7000);
}

TEST(ClusterMapTest, RefusesShardsThatDoNotReadAsAMap) {
  std::string problem;
  EXPECT_FALSE(SlotMap::from_shards(parse(bulk("x")).get(), problem));
  EXPECT_EQ(problem, "CLUSTER SHARDS: not an array");
  EXPECT_FALSE(SlotMap::from_shards(
      parse(array({shard({0, 10}, {shard_node("d", 7003, "h", "replica")})})).get(), problem));
  EXPECT_EQ(problem, "CLUSTER SHARDS: shard 0: a shard with slots and no master");
  EXPECT_FALSE(SlotMap::from_shards(
      parse(array({shard({0, 16384}, {shard_node("a", 7000, "h", "master")})})).get(), problem));
  EXPECT_EQ(problem, "CLUSTER SHARDS: shard 0: a slot range out of 0-16383");
  EXPECT_FALSE(
      SlotMap::from_shards(parse(array({shard({0, 10}, {shard_node("a", 7000, "h", "master")}),
                                        shard({10, 20}, {shard_node("b", 7001, "h", "master")})}))
                               .get(),
                           problem));
  EXPECT_EQ(problem, "slot 10 is claimed by two masters");
}

TEST(ClusterMapTest, ReadsClusterSlots) {
  const auto reply = parse(array({
      array({integer(0), integer(5460),
             array({bulk("127.0.0.1"), integer(7000), bulk("a"), array({})}),
             array({bulk("127.0.0.1"), integer(7003), bulk("d"), array({})})}),
      array({integer(5461), integer(16383), array({bulk("::1"), integer(7001)})}),
  }));
  std::string problem;
  const auto map = SlotMap::from_slots(reply.get(), problem);
  ASSERT_TRUE(map) << problem;
  ASSERT_EQ(map->masters().size(), 2u);
  EXPECT_EQ(map->owner(5460)->port, 7000);
  EXPECT_EQ(map->owner(5460)->id, "a");
  EXPECT_EQ(map->owner(5461)->host, "::1");
  EXPECT_EQ(map->uncovered(), 0u);

  EXPECT_FALSE(SlotMap::from_slots(parse(array({array({integer(0), integer(1)})})).get(), problem));
  EXPECT_EQ(problem, "CLUSTER SLOTS: range 0 lacks a master");
}

TEST(ClusterMapTest, MovedReassignsTheSlotOnly) {
  const auto reply = parse(array({shard({0, 16383}, {shard_node("a", 7000, "h", "master")})}));
  std::string problem;
  auto map = SlotMap::from_shards(reply.get(), problem);
  ASSERT_TRUE(map) << problem;
  map->move(42, ShardMaster{"h", 7001, 0, {}});
  EXPECT_EQ(map->owner(42)->port, 7001);
  EXPECT_EQ(map->owner(41)->port, 7000);
  EXPECT_EQ(map->owner(43)->port, 7000);
  EXPECT_EQ(map->masters().size(), 2u);
  // A second move to a known address reuses its master.
  map->move(43, ShardMaster{"h", 7001, 0, {}});
  EXPECT_EQ(map->masters().size(), 2u);
}

void expect_redirect(std::string_view text, Redirect::Kind kind, std::uint16_t slot,
                     std::string_view host, std::uint16_t port) {
  const auto redirect = parse_redirect(text);
  ASSERT_TRUE(redirect) << text;
  EXPECT_EQ(redirect->kind, kind) << text;
  EXPECT_EQ(redirect->slot, slot) << text;
  EXPECT_EQ(redirect->host, host) << text;
  EXPECT_EQ(redirect->port, port) << text;
}

TEST(ClusterMapTest, ParsesRedirections) {
  expect_redirect("MOVED 3999 127.0.0.1:6381", Redirect::Kind::moved, 3999, "127.0.0.1", 6381);
  // An IPv6 owner comes without brackets: the port follows the last ':'.
  expect_redirect("ASK 16383 ::1:7002", Redirect::Kind::ask, 16383, "::1", 7002);
  // The owner's endpoint unknown to the cluster: the host is left empty.
  expect_redirect("MOVED 1 :7000", Redirect::Kind::moved, 1, "", 7000);

  for (const char* text : {"ERR MOVED 1 h:1", "MOVED 16384 h:1", "MOVED 1 h:0", "MOVED 1 h:65536",
                           "MOVED 1 h", "MOVED x h:1", "MOVED  h:1", "ASK 1", "MOVED 1 h:1x",
                           "CROSSSLOT Keys in request don't hash to the same slot"}) {
    EXPECT_FALSE(parse_redirect(text)) << text;
  }
}

}  // namespace
}  // namespace redlock::net

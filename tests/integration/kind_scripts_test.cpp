// The scripts of the kinds beyond the exclusive lock (lib/scripts/kind_scripts.cpp) judged
// by what five real redis-server processes hold afterwards: an application's own data
// under a lock's key is refused as another kind and left byte for byte as it was; an
// extend never brings back an entry that expired on its node; a key set's release deletes
// only the keys its value holds; a fencing write-back (exclusive, writer, key set) raises
// no counter on a node where the caller holds nothing. Node state that no client could
// produce in a test's time (an entry expired on one node only, a key taken over) is
// written with raw commands.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "support/lock_nodes_fixture.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using Keys = std::vector<std::string>;

// Shaped like a lock value (core::new_lock_value) but no client's.
const std::string other_value = "0123456789abcdef0123456789abcdef";

class KindScriptsTest : public test::LockNodesTest {
 protected:
  static constexpr std::size_t nodes = 5;

  /// Operations return at their quorum-th reply; the other nodes follow a moment later.
  static void settle() { std::this_thread::sleep_for(200ms); }

  /// The node's own clock in ms, the clock the scripts stamp expiries with.
  static long long node_ms(std::size_t node) {
    auto time = cluster()[node].command({"TIME"});
    return std::stoll(time.elements.at(0).str) * 1000 + std::stoll(time.elements.at(1).str) / 1000;
  }

  /// What a node holds under `key`, serialized, and its expiry.
  struct Content {
    std::string dump;
    long long pttl = 0;
  };
  static Content content(std::size_t node, const std::string& key) {
    auto dump = cluster()[node].command({"DUMP", key});
    return {dump.is_nil() ? "(nil)" : dump.str, cluster()[node].command({"PTTL", key}).integer};
  }
  /// The same bytes, and an expiry neither added, removed nor moved later.
  static void expect_unchanged(const Content& before, const Content& after, std::size_t node) {
    EXPECT_TRUE(after.dump == before.dump) << "node " << node << ": the content changed";
    if (before.pttl < 0) {
      EXPECT_EQ(after.pttl, before.pttl) << "node " << node;
    } else {
      EXPECT_GT(after.pttl, 0) << "node " << node;
      EXPECT_LE(after.pttl, before.pttl) << "node " << node;
    }
  }

  static std::string counter(std::size_t node, const std::string& key) {
    return get(node, key + ":fence");
  }
};

// An application's data of each Redis type, written the same on every node. The hash and
// the sorted sets carry entries the scripts' purges would take for expired holders.
struct Foreign {
  const char* name;
  std::vector<std::vector<std::string>> fill;  // commands, "K" standing for the key
};

const std::vector<Foreign> foreign_data = {
    {"string", {{"SET", "K", "the application's value"}}},
    {"hash", {{"HSET", "K", "name", "ada", "w:" + other_value, "1", "r:x", "2"}}},
    {"zset", {{"ZADD", "K", "1", "ada", "2", "grace", "3", other_value}}},
    // Entries of a lock's shape, without the expiry a lock's key always has.
    {"lock-shaped zset", {{"ZADD", "K", "1", other_value}}},
    {"lock-shaped hash", {{"HSET", "K", "w:" + other_value, "1"}}},
    // Entries of a lock's shape apart from one, with an expiry.
    {"zset with an expiry", {{"ZADD", "K", "1", other_value, "2", "ada"}, {"EXPIRE", "K", "600"}}},
    {"hash with an expiry",
     {{"HSET", "K", "w:" + other_value, "1", "r:" + other_value, "later"}, {"EXPIRE", "K", "600"}}},
    {"list", {{"RPUSH", "K", "a", "b", "c"}}},
    {"set", {{"SADD", "K", "a", "b", "c"}}},
};

// The acquire of `key` by one kind beyond the exclusive lock.
struct KindAcquire {
  const char* name;
  std::function<Result<Lock>(Client&, const std::string&)> acquire;
};

const std::vector<KindAcquire> kind_acquires = {
    {"acquire_permit",
     [](Client& c, const std::string& key) {
       return c.acquire_permit(key, {.permits = 2, .lock = {.ttl = 10s}});
     }},
    {"read_lock", [](Client& c, const std::string& key) { return c.read_lock(key, {.ttl = 10s}); }},
    {"write_lock",
     [](Client& c, const std::string& key) { return c.write_lock(key, {.ttl = 10s}); }},
    {"fenced write_lock",
     [](Client& c, const std::string& key) {
       return c.write_lock(key, {.ttl = 10s, .fencing = true});
     }},
    // The application's key second: the free first key must not be taken either.
    {"lock_all",
     [](Client& c, const std::string& key) {
       return c.lock_all(Keys{"free", key}, {.ttl = 10s});
     }},
};

void fill(test::RedisServer& node, const Foreign& data, const std::string& key) {
  for (auto command : data.fill) {
    for (auto& word : command) {
      if (word == "K") word = key;
    }
    ASSERT_FALSE(node.command(command).is_error()) << data.name;
  }
}

TEST_F(KindScriptsTest, TheApplicationsOwnKeyIsAWrongKindAndLeftAsItWas) {
  auto client = Client::create(options());
  for (const auto& data : foreign_data) {
    for (const auto& kind : kind_acquires) {
      SCOPED_TRACE(std::string(kind.name) + " on a " + data.name);
      cluster().flushall();
      std::vector<Content> before;
      for (std::size_t node = 0; node < nodes; ++node) {
        fill(cluster()[node], data, "app");
        before.push_back(content(node, "app"));
      }
      auto taken = kind.acquire(*client, "app");
      ASSERT_FALSE(taken);
      EXPECT_EQ(taken.error(), errc::wrong_kind) << taken.error().message();
      settle();
      for (std::size_t node = 0; node < nodes; ++node) {
        expect_unchanged(before[node], content(node, "app"), node);
        EXPECT_EQ(get(node, "free"), "(nil)") << "node " << node;
        EXPECT_EQ(get(node, "app:fence"), "(nil)") << "node " << node;
      }
    }
  }
}

// The holder's key expired and the application wrote its own data under the name: the
// holder's extend, fencing write-back and release must not touch it either.
TEST_F(KindScriptsTest, AHoldersLaterCallsLeaveTheApplicationsKeyAlone) {
  auto client = Client::create(options());
  struct Case {
    const char* name;
    std::function<Result<Lock>()> acquire;
    std::vector<std::string> fill;
  };
  const std::vector<Case> cases = {
      {"permit",
       [&] { return client->acquire_permit("app", {.permits = 2, .lock = {.ttl = 10s}}); },
       {"ZADD", "app", "1", "ada"}},
      {"reader",
       [&] { return client->read_lock("app", {.ttl = 10s}); },
       {"HSET", "app", "name", "ada"}},
      {"writer",
       [&] { return client->write_lock("app", {.ttl = 10s}); },
       {"HSET", "app", "name", "ada"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    cluster().flushall();
    auto held = c.acquire();
    ASSERT_TRUE(held) << held.error().message();
    settle();
    std::vector<Content> before;
    for (std::size_t node = 0; node < nodes; ++node) {
      cluster()[node].command({"DEL", "app"});
      cluster()[node].command(c.fill);
      before.push_back(content(node, "app"));
    }
    auto extended = held->extend(10s);
    ASSERT_FALSE(extended);
    EXPECT_EQ(extended.error(), errc::wrong_kind) << extended.error().message();
    (void)held->unlock();
    settle();
    for (std::size_t node = 0; node < nodes; ++node) {
      expect_unchanged(before[node], content(node, "app"), node);
    }
  }
}

TEST_F(KindScriptsTest, InspectTellsTheApplicationsSortedSetOrHashFromALock) {
  auto client = Client::create(options());
  for (std::size_t node = 0; node < nodes; ++node) {
    cluster()[node].command({"ZADD", "scores", "99999999999999", "ada"});
    cluster()[node].command({"HSET", "profile", "w:ada", "99999999999999"});
  }
  for (const char* key : {"scores", "profile"}) {
    auto view = client->inspect(key);
    ASSERT_TRUE(view) << view.error().message();
    for (const auto& node : *view) {
      EXPECT_EQ(node.kind, LockKind::other) << key;
      EXPECT_EQ(node.outcome.error, errc::wrong_kind) << key;
      EXPECT_THAT(node.outcome.detail, HasSubstr("of other data")) << key;
      EXPECT_TRUE(node.holders.empty()) << key;
    }
  }
}

// The entry is made to end on every node while the client's validity still runs (as a
// node whose clock jumped would end it): the extend finds nothing live and must not
// write the entry back.
TEST_F(KindScriptsTest, AReadWriteExtendNeverRevivesAnEntryExpiredOnTheNode) {
  auto client = Client::create(options());
  struct Case {
    const char* role;
    std::function<Result<Lock>()> acquire;
  };
  const std::vector<Case> cases = {
      {"r", [&] { return client->read_lock("doc", {.ttl = 30s}); }},
      {"w", [&] { return client->write_lock("doc", {.ttl = 30s}); }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.role);
    cluster().flushall();
    auto held = c.acquire();
    ASSERT_TRUE(held) << held.error().message();
    settle();
    const std::string field = std::string(c.role) + ":" + held->value();
    for (std::size_t node = 0; node < nodes; ++node) {
      ASSERT_EQ(cluster()[node].command({"HEXISTS", "doc", field}).integer, 1);
      cluster()[node].command({"HSET", "doc", field, std::to_string(node_ms(node) - 1000)});
      // Another live entry keeps the hash, so the purge leaves a key to write into.
      cluster()[node].command(
          {"HSET", "doc", "r:" + other_value, std::to_string(node_ms(node) + 60'000)});
    }
    auto extended = held->extend(30s);
    ASSERT_FALSE(extended);
    EXPECT_EQ(extended.error(), errc::not_held) << extended.error().message();
    settle();
    for (std::size_t node = 0; node < nodes; ++node) {
      EXPECT_EQ(cluster()[node].command({"HEXISTS", "doc", field}).integer, 0)
          << "node " << node << " revived the expired entry";
    }
  }
}

TEST_F(KindScriptsTest, ASemaphoreExtendNeverRevivesAPermitExpiredOnTheNode) {
  auto client = Client::create(options());
  auto permit = client->acquire_permit("pool", {.permits = 2, .lock = {.ttl = 30s}});
  ASSERT_TRUE(permit) << permit.error().message();
  settle();
  for (std::size_t node = 0; node < nodes; ++node) {
    cluster()[node].command(
        {"ZADD", "pool", std::to_string(node_ms(node) - 1000), permit->value()});
    cluster()[node].command({"ZADD", "pool", std::to_string(node_ms(node) + 60'000), other_value});
  }
  auto extended = permit->extend(30s);
  ASSERT_FALSE(extended);
  EXPECT_EQ(extended.error(), errc::not_held) << extended.error().message();
  settle();
  for (std::size_t node = 0; node < nodes; ++node) {
    EXPECT_TRUE(cluster()[node].command({"ZSCORE", "pool", permit->value()}).is_nil())
        << "node " << node << " revived the expired permit";
  }
}

// Key "b" of the set ended and another holder took it on every node: the set's release
// deletes "a" and leaves "b" to its new holder.
TEST_F(KindScriptsTest, AKeySetsReleaseDeletesOnlyTheKeysItsValueHolds) {
  auto client = Client::create(options());
  auto set = client->lock_all(Keys{"a", "b"}, {.ttl = 30s});
  ASSERT_TRUE(set) << set.error().message();
  settle();
  for (std::size_t node = 0; node < nodes; ++node) {
    cluster()[node].command({"SET", "b", other_value, "PX", "60000"});
  }
  EXPECT_TRUE(set->unlock());
  settle();
  for (std::size_t node = 0; node < nodes; ++node) {
    EXPECT_EQ(get(node, "a"), "(nil)") << "node " << node;
    EXPECT_EQ(get(node, "b"), other_value) << "node " << node << ": another holder's key deleted";
  }
}

// Nodes 3 and 4 are held by another writer (or another holder of key "b"), so only nodes
// 0-2 grant; node 0's counter is ahead, so the token is 11 and is written back. A node
// that did not grant holds nothing of ours: its counter must stay as it was.
TEST_F(KindScriptsTest, AnExclusiveFencingWriteBackSkipsANodeWhereAnotherValueHoldsTheKey) {
  // The write-back goes to every node; where another value holds the key (it refused us,
  // or took the key over after our grant expired there), raising the counter to our token
  // would hand that holder's next successor a token that says nothing of our write.
  for (std::size_t node : {3u, 4u}) {
    cluster()[node].command({"SET", "ex", other_value, "PX", "60000"});
  }
  cluster()[0].command({"SET", "ex:fence", "10"});
  auto client = Client::create(options());
  auto lock = client->lock("ex", {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(lock) << lock.error().message();
  EXPECT_EQ(lock->fencing_token(), 11u);
  settle();
  for (std::size_t node : {0u, 1u, 2u}) EXPECT_EQ(counter(node, "ex"), "11") << "node " << node;
  for (std::size_t node : {3u, 4u}) {
    EXPECT_EQ(counter(node, "ex"), "(nil)") << "node " << node << " raised without holding";
  }
}

TEST_F(KindScriptsTest, AWritersFencingWriteBackSkipsANodeItDoesNotHold) {
  for (std::size_t node : {3u, 4u}) {
    cluster()[node].command(
        {"HSET", "doc", "w:" + other_value, std::to_string(node_ms(node) + 60'000)});
    cluster()[node].command({"PEXPIRE", "doc", "60000"});
  }
  cluster()[0].command({"SET", "doc:fence", "10"});
  auto client = Client::create(options());
  auto writer = client->write_lock("doc", {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(writer) << writer.error().message();
  EXPECT_EQ(writer->fencing_token(), 11u);
  settle();
  for (std::size_t node : {0u, 1u, 2u}) EXPECT_EQ(counter(node, "doc"), "11") << "node " << node;
  for (std::size_t node : {3u, 4u}) {
    EXPECT_EQ(counter(node, "doc"), "(nil)") << "node " << node << " raised without holding";
  }
}

TEST_F(KindScriptsTest, AKeySetsFencingWriteBackSkipsANodeWhereAKeyIsAnothers) {
  for (std::size_t node : {3u, 4u}) {
    cluster()[node].command({"SET", "b", other_value, "PX", "60000"});
  }
  cluster()[0].command({"SET", "a:fence", "10"});
  cluster()[0].command({"SET", "b:fence", "10"});
  auto client = Client::create(options());
  auto set = client->lock_all(Keys{"a", "b"}, {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(set) << set.error().message();
  EXPECT_EQ(set->fencing_token("a"), 11u);
  settle();
  for (std::size_t node : {3u, 4u}) {
    for (const char* key : {"a", "b"}) {
      EXPECT_EQ(counter(node, key), "(nil)") << "node " << node << " key " << key;
    }
  }
}

// The rules of each acquire, node by node: here each node's state is set by hand so
// that one rule alone decides.
TEST_F(KindScriptsTest, EachAcquireRuleHoldsOnItsOwn) {
  auto client = Client::create(options());
  const auto on_every_node = [&](std::initializer_list<std::string> fields) {
    cluster().flushall();
    for (std::size_t node = 0; node < nodes; ++node) {
      for (const auto& role : fields) {
        cluster()[node].command(
            {"HSET", "doc", role + ":" + other_value, std::to_string(node_ms(node) + 60'000)});
      }
      cluster()[node].command({"PEXPIRE", "doc", "60000"});
    }
  };
  on_every_node({"w"});
  EXPECT_EQ(client->read_lock("doc", {.ttl = 10s}).code(), make_error_code(errc::conflict))
      << "a reader got in beside a writer";
  EXPECT_EQ(client->write_lock("doc", {.ttl = 10s}).code(), make_error_code(errc::conflict))
      << "a writer got in beside a writer";
  on_every_node({"r"});
  EXPECT_EQ(client->write_lock("doc", {.ttl = 10s}).code(), make_error_code(errc::conflict))
      << "a writer got in beside a reader";
  on_every_node({"i"});
  EXPECT_EQ(client->read_lock("doc", {.ttl = 10s}).code(), make_error_code(errc::conflict))
      << "a reader got in past a waiting writer";
  auto writer = client->write_lock("doc", {.ttl = 10s});
  EXPECT_TRUE(writer) << "another writer's intent does not keep a writer out";

  // Expired entries of each role are purged and keep nobody out.
  cluster().flushall();
  for (std::size_t node = 0; node < nodes; ++node) {
    for (const char* role : {"w", "r", "i"}) {
      cluster()[node].command({"HSET", "doc", std::string(role) + ":" + other_value,
                               std::to_string(node_ms(node) - 1000)});
    }
    cluster()[node].command({"PEXPIRE", "doc", "60000"});
  }
  auto reader = client->read_lock("doc", {.ttl = 10s});
  ASSERT_TRUE(reader) << reader.error().message();
  settle();
  for (std::size_t node = 0; node < nodes; ++node) {
    EXPECT_EQ(cluster()[node].command({"HLEN", "doc"}).integer, 1) << "node " << node;
  }
}

TEST_F(KindScriptsTest, ASemaphoreAdmitsKLiveHoldersAndPurgesExpiredOnes) {
  auto client = Client::create(options());
  const std::string expired = "fedcba9876543210fedcba9876543210";
  for (std::size_t node = 0; node < nodes; ++node) {
    cluster()[node].command({"ZADD", "pool", std::to_string(node_ms(node) - 1000), expired});
    cluster()[node].command({"ZADD", "pool", std::to_string(node_ms(node) + 60'000), other_value});
    cluster()[node].command({"PEXPIRE", "pool", "60000"});
  }
  // One live holder of two permits: the expired one counts for nothing.
  auto second = client->acquire_permit("pool", {.permits = 2, .lock = {.ttl = 10s}});
  ASSERT_TRUE(second) << second.error().message();
  auto third = client->acquire_permit("pool", {.permits = 2, .lock = {.ttl = 10s}});
  ASSERT_FALSE(third);
  EXPECT_EQ(third.error(), errc::conflict);
  settle();
  for (std::size_t node = 0; node < nodes; ++node) {
    EXPECT_TRUE(cluster()[node].command({"ZSCORE", "pool", expired}).is_nil()) << node;
    EXPECT_EQ(cluster()[node].command({"ZCARD", "pool"}).integer, 2) << "node " << node;
  }
}

}  // namespace
}  // namespace redlock

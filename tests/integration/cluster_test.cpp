// Redis Clusters as Redlock members, against five real clusters of three shards (15
// redis-server processes, shared by the suite): every kind of lock, keys routed to their
// slot's owner with the fencing counter beside them, a slot moved while a lock is held,
// waiters woken by the release, and what cannot be done on a cluster refused up front.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <redlock/observer.hpp>
#include <redlock/redlock.hpp>
#include <redlock/testing/eventually.hpp>

#include "support/redis_server.hpp"
#include "support/sharded_cluster.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

class ClusterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    clusters_ = new std::vector<std::unique_ptr<test::ShardedCluster>>;
    for (int i = 0; i < 5; ++i) clusters_->push_back(std::make_unique<test::ShardedCluster>());
  }
  static void TearDownTestSuite() {
    delete clusters_;
    clusters_ = nullptr;
  }

  static test::ShardedCluster& cluster(std::size_t i) { return *clusters_->at(i); }

  static Options options(std::size_t members = 5) {
    Options options;
    for (std::size_t i = 0; i < members; ++i) options.nodes.push_back(cluster(i).url());
    return options;
  }

  // `key` on its owner in cluster `i` once it reads `expected`, or after a second: a call
  // returns at the quorum's decision, the other members' replies land a little later.
  static std::string settled(std::size_t i, const std::string& key, const std::string& expected) {
    std::string value;
    for (int tries = 0; tries < 1000; ++tries) {
      value = cluster(i).owner_of(key).command({"GET", key}).str;
      if (value == expected) break;
      std::this_thread::sleep_for(1ms);
    }
    return value;
  }

  // `key`'s PTTL on `server` once it exceeds `above`, or after a second: as for settled(),
  // an extend returns at the quorum's decision and the other members' replies come later.
  static long long extended(test::RedisServer& server, const std::string& key, long long above) {
    long long left = 0;
    for (int tries = 0; tries < 1000; ++tries) {
      left = server.command({"PTTL", key}).integer;
      if (left > above) break;
      std::this_thread::sleep_for(1ms);
    }
    return left;
  }

  // A master of cluster `i` other than `owner`.
  static test::RedisServer& another_master(std::size_t i, test::RedisServer& owner) {
    return &owner == &cluster(i).server(0) ? cluster(i).server(1) : cluster(i).server(0);
  }

  static std::vector<std::unique_ptr<test::ShardedCluster>>* clusters_;
};

std::vector<std::unique_ptr<test::ShardedCluster>>* ClusterTest::clusters_ = nullptr;

TEST_F(ClusterTest, FiveClustersGrantAFencedLockOnEachKeysOwner) {
  auto client = Client::create(options());
  // Keys whose slots lie on different shards of a cluster (slots 0-5460, 5461-10922, ...).
  for (const std::string key : {"cluster:a", "cluster:b", "cluster:c", "cluster:d"}) {
    auto lock = client->lock(key, {.ttl = 10s, .fencing = true});
    ASSERT_TRUE(lock) << lock.error().message();
    ASSERT_EQ(lock->nodes().size(), 5u);
    for (std::size_t i = 0; i < 5; ++i) {
      EXPECT_EQ(lock->nodes()[i].node, cluster(i).url());
      EXPECT_EQ(settled(i, key, lock->value()), lock->value()) << key << " on cluster " << i;
      // The fencing counter sits beside the key, in its slot, on the same server.
      EXPECT_FALSE(cluster(i).owner_of(key).command({"GET", "{" + key + "}:fence"}).is_nil())
          << key << " on cluster " << i;
    }
    ASSERT_TRUE(lock->fencing_token());
    ASSERT_TRUE(lock->extend(20s)) << key;
    EXPECT_GT(extended(cluster(0).owner_of(key), key, 15000), 15000);
    ASSERT_TRUE(lock->unlock());
    for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(settled(i, key, ""), "");
  }
}

// A cluster member releases with its own script (it announces on the key's shard): that
// script must check the owner as the standalone one does.
TEST_F(ClusterTest, AReleaseWithAnotherValueLeavesTheHoldersKey) {
  auto client = Client::create(options());
  const std::string key = "cluster:foreign-release";
  auto lock = client->lock(key, {.ttl = 10s});
  ASSERT_TRUE(lock) << lock.error().message();
  for (std::size_t i = 0; i < 5; ++i) ASSERT_EQ(settled(i, key, lock->value()), lock->value());

  EXPECT_FALSE(client->release(key, "not-the-owner"));
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(cluster(i).owner_of(key).command({"GET", key}).str, lock->value()) << "cluster " << i;
  }
  ASSERT_TRUE(lock->unlock());
}

TEST_F(ClusterTest, TokensIncreaseAcrossHoldersOnAClusterAsOnStandaloneMasters) {
  auto client = Client::create(options());
  std::uint64_t last = 0;
  for (int i = 0; i < 3; ++i) {
    auto lock = client->lock("cluster:tokens", {.ttl = 10s, .fencing = true});
    ASSERT_TRUE(lock) << lock.error().message();
    ASSERT_TRUE(lock->fencing_token());
    EXPECT_GT(*lock->fencing_token(), last);
    last = *lock->fencing_token();
    ASSERT_TRUE(lock->unlock());
  }
}

// The election's leader record sits beside its key in the key's slot, so the scripts that
// write and read it together with the key run on the key's shard.
TEST_F(ClusterTest, AnElectionOnClustersReadsItsLeaderFromTheKeysShard) {
  auto a = Client::create(options());
  auto b = Client::create(options());
  Election first(a, "cluster:election", "first", 10s);
  Election second(b, "cluster:election", "second", 10s);
  auto leading = first.campaign();
  ASSERT_TRUE(leading) << leading.error().message();
  const std::string record =
      leading->lock().value() + " " + std::to_string(leading->term()) + " first";
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(settled(i, "{cluster:election}:leader", record), record) << "cluster " << i;
  }
  auto seen = second.leader();
  ASSERT_TRUE(seen) << seen.error().message();
  ASSERT_TRUE(*seen);
  EXPECT_EQ((*seen)->identity, "first");
  EXPECT_EQ((*seen)->term, leading->term());

  std::optional<Result<Leadership>> next;
  std::thread waiter([&] { next.emplace(second.campaign({}, 5s)); });
  std::this_thread::sleep_for(200ms);
  ASSERT_TRUE(leading->resign());
  waiter.join();
  ASSERT_TRUE(*next) << next->error().message();
  EXPECT_GT((*next)->term(), leading->term());
  seen = first.leader();
  ASSERT_TRUE(seen && *seen);
  EXPECT_EQ((*seen)->identity, "second");
}

// The new leader's announcement goes out on the key's shard channel (SPUBLISH), where an
// observer's listener hears it: with its own period at 10 s, it sees the leader at once.
TEST_F(ClusterTest, AnObserverOnClustersHearsTheNewLeadersAnnouncement) {
  auto watcher = Client::create(options());
  auto candidate = Client::create(options());
  Election observer(watcher, "cluster:observed", "observer", 30s);
  Election election(candidate, "cluster:observed", "leader", 10s);
  std::mutex mutex;
  std::vector<std::optional<Leader>> reports;
  std::stop_source stop;
  std::thread watching([&] {
    (void)observer.observe(
        stop.get_token(),
        [&](const std::optional<Leader>& leader) {
          std::lock_guard<std::mutex> hold(mutex);
          reports.push_back(leader);
        },
        10s);
  });
  auto reported = [&](std::size_t n) {
    for (int tries = 0; tries < 600; ++tries) {
      {
        std::lock_guard<std::mutex> hold(mutex);
        if (reports.size() >= n) return true;
      }
      std::this_thread::sleep_for(5ms);
    }
    return false;
  };
  const bool first = reported(1);
  std::this_thread::sleep_for(200ms);  // the observer's subscription is made after its read
  auto leading = election.campaign();
  const bool second = reported(2);
  stop.request_stop();
  watching.join();
  ASSERT_TRUE(leading) << leading.error().message();
  ASSERT_TRUE(first && second) << "the new leader was not heard of";
  EXPECT_FALSE(reports[0]);
  ASSERT_TRUE(reports[1]);
  EXPECT_EQ(reports[1]->identity, "leader");
  EXPECT_EQ(reports[1]->term, leading->term());
}

TEST_F(ClusterTest, EveryKindOfLockWorksOnClusters) {
  auto client = Client::create(options());
  auto writer = client->write_lock("cluster:rw", {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(writer) << writer.error().message();
  EXPECT_FALSE(client->read_lock("cluster:rw", {.ttl = 10s}));
  ASSERT_TRUE(writer->unlock());
  auto reader = client->read_lock("cluster:rw", {.ttl = 10s});
  ASSERT_TRUE(reader) << reader.error().message();
  ASSERT_TRUE(reader->unlock());

  SemaphoreOptions two;
  two.permits = 2;
  two.lock.ttl = 10s;
  auto first = client->acquire_permit("cluster:sem", two);
  auto second = client->acquire_permit("cluster:sem", two);
  ASSERT_TRUE(first) << first.error().message();
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_FALSE(client->acquire_permit("cluster:sem", two));
  ASSERT_TRUE(first->unlock());
  ASSERT_TRUE(second->unlock());

  const std::vector<std::string> keys = {"{cluster:set}:1", "{cluster:set}:2"};
  auto set = client->lock_all(keys, {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(set) << set.error().message();
  EXPECT_TRUE(set->fencing_token(keys[1]));
  EXPECT_FALSE(client->try_lock(keys[0], 10s));
  ASSERT_TRUE(set->unlock());
}

TEST_F(ClusterTest, ALockFollowsItsSlotToAnotherShard) {
  auto client = Client::create(options());
  const std::string key = "cluster:moving";
  auto lock = client->lock(key, {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(lock) << lock.error().message();
  // The slot moves on three members, a quorum: extend and release must reach it there.
  std::vector<test::RedisServer*> new_owners;
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(settled(i, key, lock->value()), lock->value());
    test::RedisServer& owner = cluster(i).owner_of(key);
    test::RedisServer& target = another_master(i, owner);
    const auto slot =
        static_cast<std::uint16_t>(owner.command({"CLUSTER", "KEYSLOT", key}).integer);
    cluster(i).move_slot(slot, target);
    new_owners.push_back(&target);
  }
  ASSERT_TRUE(lock->extend(30s)) << "extend after the move";
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_GT(extended(*new_owners[i], key, 25000), 25000) << "cluster " << i;
  }
  // A new holder is refused by the moved slots too, then gets the key after the release.
  EXPECT_FALSE(client->try_lock(key, 10s));
  ASSERT_TRUE(lock->unlock());
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(settled(i, key, ""), "") << "cluster " << i;
  auto next = client->lock(key, {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(next) << next.error().message();
  EXPECT_GT(*next->fencing_token(), *lock->fencing_token());
  ASSERT_TRUE(next->unlock());
}

TEST_F(ClusterTest, AKeyOfAMigratingSlotIsAskedOfTheImportingServer) {
  auto client = Client::create(options());
  const std::string key = "{cluster:ask}new";
  std::vector<test::RedisServer*> importing;
  std::vector<std::uint16_t> slots;
  for (std::size_t i = 0; i < 3; ++i) {
    test::RedisServer& owner = cluster(i).owner_of(key);
    test::RedisServer& target = another_master(i, owner);
    slots.push_back(static_cast<std::uint16_t>(owner.command({"CLUSTER", "KEYSLOT", key}).integer));
    // The owner keeps the slot but sends the keys it does not have to `target` (ASK).
    cluster(i).begin_migration(slots.back(), target);
    importing.push_back(&target);
  }
  // The lock and its fencing counter are two keys, which a slot being imported takes only
  // once both moved: TRYAGAIN, an error of those members for now.
  auto fenced = client->lock(key, {.ttl = 10s, .fencing = true});
  ASSERT_FALSE(fenced);
  EXPECT_THAT(fenced.error().message(), HasSubstr("TRYAGAIN"));
  // A lock alone is one key (SET NX once the client knows the servers take it: the lock
  // above taught it that).
  auto lock = client->lock(key, {.ttl = 10s});
  ASSERT_TRUE(lock) << lock.error().message();
  for (std::size_t i = 0; i < 3; ++i) {
    // The grant is on the importing server (which answers for the slot only after
    // ASKING), not on the owner.
    std::string there;
    for (int tries = 0; tries < 1000 && there != lock->value(); ++tries) {
      importing[i]->command({"ASKING"});
      there = importing[i]->command({"GET", key}).str;
      if (there != lock->value()) std::this_thread::sleep_for(1ms);
    }
    EXPECT_EQ(there, lock->value()) << "cluster " << i;
    cluster(i).move_slot(slots[i], *importing[i]);
    EXPECT_EQ(settled(i, key, lock->value()), lock->value()) << "cluster " << i;
  }
  ASSERT_TRUE(lock->unlock());
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(settled(i, key, ""), "") << "cluster " << i;
}

// What the cluster member does for its keys is visible to an observer: each slot map read
// (slot_map_read, naming the shards), each MOVED followed (moved, naming the shard that
// answered and the new owner) and each ASK followed (ask).
TEST_F(ClusterTest, RedirectionsAndSlotMapsAreObserved) {
  struct Recorder : Observer {
    std::mutex mutex;
    std::vector<std::pair<NodeEventKind, std::string>> seen;
    void on_node(const NodeEvent& event) override {
      std::lock_guard<std::mutex> hold(mutex);
      seen.emplace_back(event.kind, std::string(event.node) + " | " + std::string(event.detail));
    }
    std::vector<std::string> of(NodeEventKind kind) {
      std::lock_guard<std::mutex> hold(mutex);
      std::vector<std::string> found;
      for (const auto& [one, text] : seen) {
        if (one == kind) found.push_back(text);
      }
      return found;
    }
  };
  auto recorder = std::make_shared<Recorder>();
  Options one;
  one.nodes = {cluster(4).url()};
  one.observer = recorder;
  auto client = Client::create(one);
  const std::string key = "cluster:observed";
  auto lock = client->lock(key, {.ttl = 10s});
  ASSERT_TRUE(lock) << lock.error().message();
  auto maps = recorder->of(NodeEventKind::slot_map_read);
  ASSERT_EQ(maps.size(), 1u);
  EXPECT_THAT(maps[0], HasSubstr(cluster(4).url() + " | shards 127.0.0.1:"));
  EXPECT_TRUE(recorder->of(NodeEventKind::moved).empty());

  test::RedisServer& owner = cluster(4).owner_of(key);
  test::RedisServer& target = another_master(4, owner);
  const auto slot = owner.command({"CLUSTER", "KEYSLOT", key}).integer;
  cluster(4).move_slot(static_cast<std::uint16_t>(slot), target);
  ASSERT_TRUE(lock->extend(10s));
  const auto moved = recorder->of(NodeEventKind::moved);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_THAT(moved[0],
              HasSubstr(" | 127.0.0.1:" + std::to_string(owner.port()) + ": MOVED " +
                        std::to_string(slot) + " 127.0.0.1:" + std::to_string(target.port())));
  // The MOVED started a fresh slot map.
  for (int tries = 0; tries < 1000 && recorder->of(NodeEventKind::slot_map_read).size() < 2;
       ++tries) {
    std::this_thread::sleep_for(1ms);
  }
  EXPECT_EQ(recorder->of(NodeEventKind::slot_map_read).size(), 2u);
  ASSERT_TRUE(lock->unlock());

  const std::string asked = "{cluster:observed-ask}new";
  test::RedisServer& asked_owner = cluster(4).owner_of(asked);
  test::RedisServer& importing = another_master(4, asked_owner);
  const auto asked_slot = asked_owner.command({"CLUSTER", "KEYSLOT", asked}).integer;
  cluster(4).begin_migration(static_cast<std::uint16_t>(asked_slot), importing);
  auto imported = client->lock(asked, {.ttl = 10s});
  ASSERT_TRUE(imported) << imported.error().message();
  const auto ask = recorder->of(NodeEventKind::ask);
  ASSERT_EQ(ask.size(), 1u);
  EXPECT_THAT(ask[0], HasSubstr(": ASK " + std::to_string(asked_slot) +
                                " 127.0.0.1:" + std::to_string(importing.port())));
  EXPECT_EQ(std::string(to_string(NodeEventKind::ask)), "ask");
  EXPECT_EQ(std::string(to_string(NodeEventKind::moved)), "moved");
  EXPECT_EQ(std::string(to_string(NodeEventKind::slot_map_read)), "slot_map_read");
  cluster(4).move_slot(static_cast<std::uint16_t>(asked_slot), importing);
  ASSERT_TRUE(imported->unlock());
}

TEST_F(ClusterTest, AWaiterWakesOnTheReleaseWithoutPolling) {
  Options slow = options();
  // Without the release's announcement the waiter would try again only seconds later.
  slow.retry_delay = 10000ms;
  slow.retry_jitter = 0ms;
  // Two clients: within one, a release hands the key to a local waiter directly.
  auto holder = Client::create(slow);
  auto client = Client::create(slow);
  auto held = holder->lock("cluster:wake", {.ttl = 20s});
  ASSERT_TRUE(held) << held.error().message();
  auto waiter = std::async(std::launch::async,
                           [&] { return client->lock("cluster:wake", {.ttl = 10s, .wait = 30s}); });
  std::this_thread::sleep_for(300ms);  // the waiter's first attempt is refused
  const auto released = Clock::now();
  ASSERT_TRUE(held->unlock());
  auto got = waiter.get();
  ASSERT_TRUE(got) << got.error().message();
  EXPECT_LT(Clock::now() - released, 3s);
  ASSERT_TRUE(got->unlock());
}

// What a waiter saw: its attempts' outcomes and what woke it, in order.
class WaitRecorder final : public Observer {
 public:
  void on_attempt(const AttemptEvent& e) override {
    std::lock_guard lock(mutex_);
    attempts_.push_back(e.outcome);
  }
  void on_wake(const WakeEvent& e) override {
    std::lock_guard lock(mutex_);
    wakes_.push_back(e.cause);
  }
  std::vector<AttemptOutcome> attempts() {
    std::lock_guard lock(mutex_);
    return attempts_;
  }
  std::vector<WakeCause> wakes() {
    std::lock_guard lock(mutex_);
    return wakes_;
  }

 private:
  std::mutex mutex_;
  std::vector<AttemptOutcome> attempts_;
  std::vector<WakeCause> wakes_;
};

// Waits up to 5 s for what another process's state says; polls every 10 ms.
using redlock::testing::eventually;

// Subscribers of the shard channel `channel` on `server` (PUBSUB SHARDNUMSUB).
long long shard_subscribers(test::RedisServer& server, const std::string& channel) {
  const test::Reply reply = server.command({"PUBSUB", "SHARDNUMSUB", channel});
  return reply.elements.size() == 2 ? reply.elements[1].integer : -1;
}

// Connections `server` accepted so far (INFO stats).
long long connections_received(test::RedisServer& server) {
  const std::string info = server.command({"INFO", "stats"}).str;
  const std::string name = "total_connections_received:";
  return std::stoll(info.substr(info.find(name) + name.size()));
}

// A counter of CLUSTER INFO (absent while it is 0).
long long cluster_counter(test::RedisServer& server, const std::string& name) {
  const std::string info = server.command({"CLUSTER", "INFO"}).str;
  const auto at = info.find(name + ":");
  return at == std::string::npos ? 0 : std::stoll(info.substr(at + name.size() + 1));
}

// A waiter of `key` on the five clusters, woken only by an announcement within the test
// (its retry timer is long); `holder` holds the key in another client, since within one
// client a release hands the key to a local waiter without an announcement.
struct AnnouncedWait {
  std::shared_ptr<WaitRecorder> recorder = std::make_shared<WaitRecorder>();
  std::shared_ptr<Client> client;
  std::future<bool> waiter;

  // A waiter still waiting (a failed test) ends at once.
  ~AnnouncedWait() { client->close(); }

  // `take` waits for the lock on `client` and releases it: true when both succeeded.
  AnnouncedWait(Options options, std::function<bool(Client&)> take) {
    options.retry_delay = 30s;
    options.retry_jitter = 0ms;
    options.observer = recorder;
    client = Client::create(options);
    waiter = std::async(std::launch::async, [this, take] { return take(*client); });
  }
  AnnouncedWait(Options options, const std::string& key)
      : AnnouncedWait(std::move(options), [key](Client& client) {
          auto got = client.lock(key, {.ttl = 10s, .wait = 60s});
          return got && got->unlock();
        }) {}
  // The first attempt was refused: the waiter now waits for a wake.
  bool refused() {
    return eventually([&] { return !recorder->attempts().empty(); }) &&
           recorder->attempts().front() == AttemptOutcome::conflict;
  }
  // What woke the waiter first, once it holds the lock.
  std::optional<WakeCause> first_wake() {
    if (waiter.wait_for(8s) != std::future_status::ready || !waiter.get()) return std::nullopt;
    const auto wakes = recorder->wakes();
    if (wakes.empty()) return std::nullopt;
    return wakes.front();
  }
};

TEST_F(ClusterTest, AWaiterIsWokenByTheAnnouncementOnTheKeysShard) {
  const std::string key = "cluster:announced";
  auto holder = Client::create(options());
  auto held = holder->lock(key, {.ttl = 20s});
  ASSERT_TRUE(held) << held.error().message();
  AnnouncedWait wait(options(), key);
  ASSERT_TRUE(wait.refused());
  // The waiter listens on the shard channel beside the key, on the key's shard alone.
  for (std::size_t i = 0; i < 5; ++i) {
    test::RedisServer& owner = cluster(i).owner_of(key);
    EXPECT_TRUE(eventually([&] { return shard_subscribers(owner, "{" + key + "}:released") == 1; }))
        << "cluster " << i;
  }
  ASSERT_TRUE(held->unlock());
  const auto woken = wait.first_wake();
  ASSERT_TRUE(woken.has_value()) << "the waiter did not get the lock within 8 s";
  EXPECT_EQ(*woken, WakeCause::announcement);
}

TEST_F(ClusterTest, EveryKindAnnouncesItsReleaseOnTheKeysShard) {
  // Keys without a hash tag: the scripts name the channel in the key's slot themselves.
  auto holder = Client::create(options());
  SemaphoreOptions one;
  one.permits = 1;
  one.lock.ttl = 10s;
  auto permit = holder->acquire_permit("cluster:sem-announced", one);
  ASSERT_TRUE(permit) << permit.error().message();
  one.lock.wait = 60s;
  AnnouncedWait permit_wait(options(), [one](Client& client) {
    auto got = client.acquire_permit("cluster:sem-announced", one);
    return got && got->unlock();
  });
  ASSERT_TRUE(permit_wait.refused());
  ASSERT_TRUE(permit->unlock());
  EXPECT_EQ(permit_wait.first_wake(), WakeCause::announcement) << "semaphore";

  auto reader = holder->read_lock("cluster:rw-announced", {.ttl = 10s});
  ASSERT_TRUE(reader) << reader.error().message();
  AnnouncedWait writer_wait(options(), [](Client& client) {
    auto got = client.write_lock("cluster:rw-announced", {.ttl = 10s, .wait = 60s});
    return got && got->unlock();
  });
  ASSERT_TRUE(writer_wait.refused());
  ASSERT_TRUE(reader->unlock());
  EXPECT_EQ(writer_wait.first_wake(), WakeCause::announcement) << "read-write lock";

  const std::vector<std::string> keys = {"cluster:set-announced:1", "cluster:set-announced:2"};
  auto set = holder->lock_all(keys, {.ttl = 10s});
  ASSERT_TRUE(set) << set.error().message();
  // A set spread over slots is announced on its first key's slot (held.cpp).
  AnnouncedWait single_wait(options(), keys[0]);
  ASSERT_TRUE(single_wait.refused());
  ASSERT_TRUE(set->unlock());
  EXPECT_EQ(single_wait.first_wake(), WakeCause::announcement) << "key set";
}

TEST_F(ClusterTest, TheOtherShardsHearNothingOfARelease) {
  const std::string key = "cluster:quiet-neighbours";
  auto client = Client::create(options());
  auto lock = client->lock(key, {.ttl = 10s});
  ASSERT_TRUE(lock) << lock.error().message();
  std::vector<test::RedisServer*> others;
  std::vector<long long> before;
  for (std::size_t i = 0; i < 5; ++i) {
    test::RedisServer& owner = cluster(i).owner_of(key);
    ASSERT_EQ(settled(i, key, lock->value()), lock->value());
    for (std::size_t s = 0; s < cluster(i).servers(); ++s) {
      if (&cluster(i).server(s) == &owner) continue;
      others.push_back(&cluster(i).server(s));
      before.push_back(
          cluster_counter(cluster(i).server(s), "cluster_stats_messages_publish_received"));
    }
  }
  ASSERT_TRUE(lock->unlock());
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(settled(i, key, ""), "") << "cluster " << i;
  // A PUBLISH would reach every other node over the cluster bus within milliseconds; a
  // SPUBLISH reaches none of them (no replicas here).
  std::this_thread::sleep_for(300ms);
  for (std::size_t n = 0; n < others.size(); ++n) {
    EXPECT_EQ(cluster_counter(*others[n], "cluster_stats_messages_publish_received"), before[n])
        << others[n]->url();
  }
}

TEST_F(ClusterTest, AWaiterFollowsItsChannelWhenTheSlotMoves) {
  const std::string key = "cluster:announced-after-a-move";
  const std::string channel = "{" + key + "}:released";
  auto holder = Client::create(options());
  auto held = holder->lock(key, {.ttl = 20s});
  ASSERT_TRUE(held) << held.error().message();
  AnnouncedWait wait(options(), key);
  ASSERT_TRUE(wait.refused());
  // On every member the slot moves after the waiter subscribed: the old owner ends the
  // subscription, and only one renewed on the new owner hears the release.
  std::vector<test::RedisServer*> old_owners;
  std::vector<long long> connections;
  for (std::size_t i = 0; i < 5; ++i) {
    test::RedisServer& owner = cluster(i).owner_of(key);
    ASSERT_TRUE(eventually([&] { return shard_subscribers(owner, channel) == 1; }))
        << "cluster " << i;
    old_owners.push_back(&owner);
    connections.push_back(connections_received(owner));
    test::RedisServer& target = another_master(i, owner);
    const auto slot =
        static_cast<std::uint16_t>(owner.command({"CLUSTER", "KEYSLOT", key}).integer);
    cluster(i).move_slot(slot, target);
  }
  for (std::size_t i = 0; i < 5; ++i) {
    test::RedisServer& owner = cluster(i).owner_of(key);
    EXPECT_TRUE(eventually([&] { return shard_subscribers(owner, channel) == 1; }))
        << "cluster " << i << ": the subscription was not renewed on the new owner";
    // Renewed on the server's word ("sunsubscribe"), not after a dropped connection.
    EXPECT_EQ(connections_received(*old_owners[i]), connections[i]) << "cluster " << i;
  }
  ASSERT_TRUE(held->unlock());
  const auto woken = wait.first_wake();
  ASSERT_TRUE(woken.has_value()) << "the waiter did not get the lock within 8 s";
  EXPECT_EQ(*woken, WakeCause::announcement);
}

TEST_F(ClusterTest, TwoKeysOnOneShardChannelEachWakeTheirOwnWaiter) {
  // "k" and "{k}" both announce on "{k}:released" on a cluster member: one subscription
  // serves the two waiters of one client, and must outlive the first that leaves.
  const std::string first = "cluster:twin";
  const std::string second = "{cluster:twin}";
  const std::string channel = "{cluster:twin}:released";
  auto holder = Client::create(options());
  auto held_first = holder->lock(first, {.ttl = 20s});
  ASSERT_TRUE(held_first) << held_first.error().message();
  auto held_second = holder->lock(second, {.ttl = 20s});
  ASSERT_TRUE(held_second) << held_second.error().message();
  auto recorder = std::make_shared<WaitRecorder>();
  Options waiting = options();
  waiting.retry_delay = 30s;  // only an announcement wakes them within the test
  waiting.retry_jitter = 0ms;
  waiting.observer = recorder;
  auto client = Client::create(waiting);
  const auto take = [&client](const std::string& key) {
    return std::async(std::launch::async, [&client, key] {
      auto got = client->lock(key, {.ttl = 10s, .wait = 60s});
      return got && got->unlock();
    });
  };
  auto first_waiter = take(first);
  auto second_waiter = take(second);
  // A waiter still waiting (a failed test) ends at once.
  struct Closer {
    std::shared_ptr<Client>& client;
    ~Closer() { client->close(); }
  } closer{client};
  ASSERT_TRUE(eventually([&] { return recorder->attempts().size() == 2; }));
  for (std::size_t i = 0; i < 5; ++i) {
    test::RedisServer& owner = cluster(i).owner_of(first);
    ASSERT_TRUE(eventually([&] { return shard_subscribers(owner, channel) == 1; }))
        << "cluster " << i;
  }
  ASSERT_TRUE(held_first->unlock());
  ASSERT_EQ(first_waiter.wait_for(8s), std::future_status::ready)
      << "the first key's release did not wake its waiter";
  EXPECT_TRUE(first_waiter.get());
  ASSERT_TRUE(held_second->unlock());
  ASSERT_EQ(second_waiter.wait_for(8s), std::future_status::ready)
      << "the second key's waiter lost the channel with the first";
  EXPECT_TRUE(second_waiter.get());
  // Each was woken by an announcement (the retry delay is 30 s). The second is also woken
  // in vain by the first's release, which it cannot tell from its own on the shared
  // channel, and may retry at once when a release is announced during that attempt.
  const auto wakes = recorder->wakes();
  EXPECT_GE(std::count(wakes.begin(), wakes.end(), WakeCause::announcement), 2);
}

// A cluster without sharded pub/sub (Redis before 7.0; here the commands are renamed
// away): releases still succeed and announce with PUBLISH, and waiters SUBSCRIBE.
TEST(ClusterMembers, AClusterWithoutShardedPubSubAnnouncesWithPublish) {
  test::ShardedCluster old_cluster(
      {.server_args = {"--rename-command", "SPUBLISH", "", "--rename-command", "SSUBSCRIBE", "",
                       "--rename-command", "SUNSUBSCRIBE", ""}});
  Options one;
  one.nodes = {old_cluster.url()};
  const std::string key = "cluster:no-sharded-pubsub";
  auto holder = Client::create(one);
  auto held = holder->lock(key, {.ttl = 20s});
  ASSERT_TRUE(held) << held.error().message();
  AnnouncedWait wait(one, key);
  ASSERT_TRUE(wait.refused());
  EXPECT_TRUE(eventually([&] {
    const auto reply =
        old_cluster.server(0).command({"PUBSUB", "NUMSUB", "{" + key + "}:released"});
    return reply.elements.size() == 2 && reply.elements[1].integer == 1;
  })) << "the waiter did not SUBSCRIBE on the seed";
  auto released = held->unlock();
  ASSERT_TRUE(released) << released.error().message();
  EXPECT_EQ(wait.first_wake(), WakeCause::announcement);
}

TEST_F(ClusterTest, ClustersMixWithStandaloneMasters) {
  test::RedisServer first;
  test::RedisServer second;
  Options mixed;
  mixed.nodes = {first.url(), cluster(0).url(), second.url()};
  auto client = Client::create(mixed);
  auto lock = client->lock("cluster:mixed", {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(lock) << lock.error().message();
  EXPECT_EQ(settled(0, "cluster:mixed", lock->value()), lock->value());
  // The standalone masters keep the counter's name they always had.
  EXPECT_FALSE(first.command({"GET", "cluster:mixed:fence"}).is_nil());
  ASSERT_TRUE(lock->unlock());
}

TEST_F(ClusterTest, KeysThatCannotShareTheirSlotAreRefusedNamingTheMember) {
  auto client = Client::create(options(3));
  auto brace = client->lock("a}b", {.ttl = 10s, .fencing = true});
  ASSERT_FALSE(brace);
  EXPECT_EQ(brace.error().code(), errc::invalid_argument);
  EXPECT_THAT(brace.error().message(),
              HasSubstr("key \"a}b\" cannot be placed on cluster member " + cluster(0).url()));
  // A hash tag makes it possible.
  auto tagged = client->lock("{a}}b", {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(tagged) << tagged.error().message();
  ASSERT_TRUE(tagged->unlock());
  // Every call that takes a key refuses it the same way, before any command: none could
  // act on a lock that can never be taken there.
  const std::string why = "cannot be placed on cluster member " + cluster(0).url();
  std::vector<std::pair<std::string, std::optional<Error>>> refused;
  const auto error_of = [](auto result) -> std::optional<Error> {
    if (result) return std::nullopt;
    return std::move(result).error();
  };
  refused.emplace_back("status", error_of(client->status("a}b")));
  refused.emplace_back("inspect", error_of(client->inspect("a}b")));
  refused.emplace_back("release", error_of(client->release("a}b", "value")));
  refused.emplace_back("extend", error_of(client->extend("a}b", "value", 10s)));
  refused.emplace_back("acquire_permit", error_of(client->acquire_permit("a}b", {.permits = 2})));
  for (const auto& [call, error] : refused) {
    ASSERT_TRUE(error.has_value()) << call;
    EXPECT_EQ(error->code(), errc::invalid_argument) << call;
    EXPECT_THAT(error->message(), HasSubstr(why)) << call;
  }
}

// A key set whose keys lie in different slots (and shards) is sent as one script per slot
// on each member, and each member grants it all or none: all keys with their fencing
// counters on their owners, extended and released together; a set one of whose keys is
// held is refused, and the keys its other slots granted are released at once.
TEST_F(ClusterTest, AKeySetSpreadOverSlotsIsTakenAllOrNonePerMember) {
  auto client = Client::create(options());
  const std::vector<std::string> keys = {"cluster:set-a", "cluster:set-b", "cluster:set-c",
                                         "cluster:set-d"};
  std::set<test::RedisServer*> shards;
  for (const auto& key : keys) shards.insert(&cluster(0).owner_of(key));
  ASSERT_GE(shards.size(), 2u) << "the keys must lie on different shards";
  auto set = client->lock_all(keys, {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(set) << set.error().message();
  for (std::size_t i = 0; i < 5; ++i) {
    for (const auto& key : keys) {
      EXPECT_EQ(settled(i, key, set->value()), set->value()) << key << " on cluster " << i;
      EXPECT_FALSE(cluster(i).owner_of(key).command({"GET", "{" + key + "}:fence"}).is_nil())
          << key << "'s counter on cluster " << i;
    }
  }
  for (const auto& key : keys) EXPECT_TRUE(set->fencing_token(key)) << key;
  EXPECT_FALSE(client->try_lock(keys[2], 10s));
  ASSERT_TRUE(set->extend(20s));
  for (std::size_t i = 0; i < 5; ++i) {
    for (const auto& key : keys) {
      EXPECT_GT(extended(cluster(i).owner_of(key), key, 15'000), 15'000)
          << key << " on cluster " << i;
    }
  }
  ASSERT_TRUE(set->unlock());
  for (std::size_t i = 0; i < 5; ++i) {
    for (const auto& key : keys) EXPECT_EQ(settled(i, key, ""), "") << key << " on cluster " << i;
  }

  // All or none: one key of the set held by another lock, the others granted on their
  // slots are released again, on every member.
  auto other = Client::create(options());
  auto blocker = other->lock(keys[3], {.ttl = 10s});
  ASSERT_TRUE(blocker) << blocker.error().message();
  auto refused = client->lock_all(keys, {.ttl = 10s, .fencing = true});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), errc::conflict) << refused.error().message();
  for (std::size_t i = 0; i < 5; ++i) {
    for (std::size_t k = 0; k < 3; ++k) {
      EXPECT_EQ(settled(i, keys[k], ""), "") << keys[k] << " kept on cluster " << i;
    }
  }
  ASSERT_TRUE(blocker->unlock());
  auto after = client->lock_all(keys, {.ttl = 10s});
  ASSERT_TRUE(after) << after.error().message();
  ASSERT_TRUE(after->unlock());
}

TEST_F(ClusterTest, ASeedThatIsDownIsPassedOverForTheNext) {
  test::RedisServer gone;
  const std::uint16_t dead = gone.port();
  gone.kill9();
  std::string url = cluster(0).url();
  url.insert(std::string("redis-cluster://").size(), "127.0.0.1:" + std::to_string(dead) + ",");
  Options one;
  one.nodes = {url};
  auto client = Client::create(one);
  auto lock = client->lock("cluster:seed", {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(lock) << lock.error().message();
  EXPECT_EQ(settled(0, "cluster:seed", lock->value()), lock->value());
  ASSERT_TRUE(lock->unlock());
}

TEST(ClusterMembers, AClusterNoSeedAnswersIsReportedWithTheSeed) {
  test::RedisServer gone;
  const std::string address = "127.0.0.1:" + std::to_string(gone.port());
  gone.kill9();
  Options options;
  options.nodes = {"redis-cluster://" + address};
  auto client = Client::create(options);
  auto lock = client->try_lock("cluster:nobody", 10s);
  ASSERT_FALSE(lock);
  ASSERT_EQ(lock.error().nodes().size(), 1u);
  EXPECT_EQ(lock.error().nodes()[0].node, "redis-cluster://" + address);
  EXPECT_THAT(lock.error().nodes()[0].detail, HasSubstr(address));
}

TEST(ClusterMembers, TheSameSeedsListedTwiceAreADuplicate) {
  Options twice;
  twice.nodes = {"redis-cluster://127.0.0.1:7001,127.0.0.1:7000",
                 "redis-cluster://:pw@127.0.0.1:7000,127.0.0.1:7001"};
  try {
    Client::create(twice);
    FAIL() << "accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_THAT(error.what(), HasSubstr("nodes: duplicate node "
                                        "cluster:127.0.0.1:7000,127.0.0.1:7001 "
                                        "(entries 1 and 2)"));
  }
}

}  // namespace
}  // namespace redlock

// A cluster member's shard masters losing keys, on real clusters: a master restarted
// without persistence while a lock on one of its keys is held, and a replica promoted by
// CLUSTER FAILOVER. The member guard (Options::member_guard) watches every shard master,
// not only the seed that carries the member's keyless commands; and a failover is
// followed (MOVED, a fresh slot map) so that extend and release still reach the key.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <redlock/observer.hpp>
#include <redlock/redlock.hpp>
#include <redlock/testing/eventually.hpp>

#include "support/redis_server.hpp"
#include "support/sharded_cluster.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

Options member(test::ShardedCluster& cluster, std::chrono::milliseconds longest_ttl) {
  Options options;
  options.nodes = {cluster.url()};
  options.retry_delay = 50ms;
  options.member_guard.longest_ttl = longest_ttl;
  return options;
}

// A key whose slot a master other than the first seed owns: the seed carries the member's
// keyless commands (its INFO was the only one watched before), so a guard seen for this
// key comes from its own shard.
std::string key_off_the_seed(test::ShardedCluster& cluster, const std::string& prefix) {
  for (int i = 0;; ++i) {
    std::string key = prefix + std::to_string(i);
    if (&cluster.owner_of(key) != &cluster.server(0)) return key;
  }
}

// Another key of `key`'s slot.
std::string beside(const std::string& key, const std::string& what) {
  return "{" + key + "}:" + what;
}

void expect_contains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "no \"" << part << "\" in: " << text;
}

// The contender met the shard before its master restarted empty: while the holder's lock
// may still be live, the contender must not get the key on that shard's grant; once the
// longest ttl has passed since the shard came back, it does.
TEST(ClusterShardFaults, AShardMasterRestartedEmptyIsGuardedNotOnlyTheSeed) {
  test::ShardedCluster cluster;
  const std::string key = key_off_the_seed(cluster, "shard-restart:");
  test::RedisServer& owner = cluster.owner_of(key);
  auto holder = Client::create(member(cluster, 3s));
  auto contender = Client::create(member(cluster, 3s));
  {
    auto met = contender->try_lock(beside(key, "meet"), 1s);
    ASSERT_TRUE(met) << met.error().message();
    ASSERT_TRUE(met->unlock());
  }
  auto lock = holder->try_lock(key, 3s);
  ASSERT_TRUE(lock) << lock.error().message();
  const auto valid_until = Clock::now() + lock->validity();

  owner.restart();
  cluster.wait_consistent();
  ASSERT_TRUE(owner.command({"GET", key}).is_nil()) << "the restart kept the key";

  auto during = contender->lock(key, {.ttl = 3s, .wait = 500ms});
  // Refused by the guard (the reasons below), not by the holder's key, which the restart
  // emptied; so this holds however long the restart took on a loaded machine.
  ASSERT_FALSE(during) << "two holders: the restarted shard's grant counted";
  expect_contains(during.error().message(), "guarded for another");
  expect_contains(during.error().message(), "shard 127.0.0.1:" + std::to_string(owner.port()));
  expect_contains(during.error().message(), "run_id changed");

  auto after = contender->lock(key, {.ttl = 3s, .wait = 5s});
  ASSERT_TRUE(after) << after.error().message();
  EXPECT_GE(Clock::now(), valid_until) << "handed out while the first holder was valid";
}

// A shard's replica takes over its slots (CLUSTER FAILOVER) while a lock on one of its keys
// is held. The client follows: its extend reaches the old master, which answers MOVED, and
// is carried by the new one; release removes the key there; a new lock on another key of
// the shard is granted. The guard is off here: with it, the promoted replica's grants do
// not count for the longest ttl (the next test), and this one times the follow alone.
TEST(ClusterShardFaults, AShardFailoverIsFollowedByExtendReleaseAndNewLocks) {
  test::ShardedCluster cluster({.shards = 3, .replicas_per_shard = 1});
  const std::string key = key_off_the_seed(cluster, "shard-failover:");
  test::RedisServer& old_master = cluster.owner_of(key);
  test::RedisServer& replica = cluster.replica_of(old_master);
  auto options = member(cluster, 0ms);
  options.member_guard.observed_restarts = false;
  auto client = Client::create(options);
  auto lock = client->lock(key, {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(lock) << lock.error().message();

  // Locks on another key of the shard, one after another, while the shard fails over:
  // the longest time between two of them granted is how long the client took to follow.
  std::atomic<bool> stop{false};
  std::vector<Clock::time_point> granted;
  std::thread prober([&] {
    while (!stop) {
      auto probe = client->try_lock(beside(key, "probe"), 2s);
      if (probe) {
        granted.push_back(Clock::now());
        (void)probe->unlock();
      }
    }
  });
  const auto asked = Clock::now();
  cluster.fail_over_to(replica);
  const auto promoted = Clock::now();
  std::this_thread::sleep_for(200ms);
  stop = true;
  prober.join();
  Clock::duration longest_gap{0};
  for (std::size_t i = 1; i < granted.size(); ++i) {
    longest_gap = std::max(longest_gap, granted[i] - granted[i - 1]);
  }
  ASSERT_FALSE(granted.empty());
  EXPECT_GT(granted.back(), promoted) << "no lock on the shard granted after the failover";
  ASSERT_EQ(&cluster.owner_of(key), &replica);
  ASSERT_EQ(replica.command({"GET", key}).str, lock->value()) << "the replica lacked the key";

  const auto extend_sent = Clock::now();
  auto extended = lock->extend(20s);
  const auto followed = Clock::now();
  ASSERT_TRUE(extended) << extended.error().message();
  EXPECT_GT(replica.command({"PTTL", key}).integer, 12'000) << "the extend missed the new master";
  auto ms = [](Clock::duration span) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(span).count();
  };
  std::cout << "[ timing ] replica known everywhere, CLUSTER FAILOVER, every server agrees: "
            << ms(promoted - asked)
            << " ms; longest gap between two locks granted on the shard meanwhile: "
            << ms(longest_gap) << " ms (" << granted.size()
            << " granted); the held lock's first extend after it: " << ms(followed - extend_sent)
            << " ms\n";

  ASSERT_TRUE(lock->unlock());
  EXPECT_TRUE(replica.command({"GET", key}).is_nil()) << "the release missed the new master";

  auto next = client->lock(beside(key, "next"), {.ttl = 5s, .fencing = true});
  ASSERT_TRUE(next) << next.error().message();
  EXPECT_TRUE(next->fencing_token().has_value());
  EXPECT_EQ(replica.command({"GET", beside(key, "next")}).str, next->value());
  EXPECT_TRUE(next->unlock());
}

// What a client logged at debug level, each line with its time since the timeline began:
// printed when a test that waits on another client's behaviour fails.
class Timeline {
 public:
  LogSink sink(std::string who) {
    return [this, who = std::move(who)](LogLevel level, std::string_view line) {
      const auto at = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - begun_);
      std::lock_guard lock(mutex_);
      text_ += std::to_string(at.count()) + " ms " + who + " " + to_string(level) + ": " +
               std::string(line) + "\n";
    };
  }
  void mark(std::string_view what) { sink("test")(LogLevel::info, what); }
  std::string text() const {
    std::lock_guard lock(mutex_);
    return text_;
  }

 private:
  const Clock::time_point begun_ = Clock::now();
  mutable std::mutex mutex_;
  std::string text_;
};

// The waiter's attempts and the cause of its first wake.
struct FirstWake final : Observer {
  std::atomic<int> attempts{0};
  std::atomic<int> first{-1};
  void on_attempt(const AttemptEvent&) override { ++attempts; }
  void on_wake(const WakeEvent& e) override {
    int none = -1;
    first.compare_exchange_strong(none, static_cast<int>(e.cause));
  }
};

// A waiter's shard subscription follows a failover: Redis 7.0 lets the demoted master keep
// it (a shard's messages reach its replicas too) until its connection fails; then it is
// made on the promoted replica, whose release, announced on that shard alone, wakes the
// waiter (its retry timer is far off).
TEST(ClusterShardFaults, AWaitersSubscriptionFollowsAShardFailover) {
  test::ShardedCluster cluster({.shards = 3, .replicas_per_shard = 1});
  const std::string key = key_off_the_seed(cluster, "shard-failover-wait:");
  const std::string channel = "{" + key + "}:released";
  test::RedisServer& old_master = cluster.owner_of(key);
  test::RedisServer& replica = cluster.replica_of(old_master);
  auto options = member(cluster, 0ms);
  options.member_guard.observed_restarts = false;
  Timeline timeline;
  options.log_level = LogLevel::debug;
  options.log = timeline.sink("holder");
  auto holder = Client::create(options);
  auto lock = holder->lock(key, {.ttl = 20s});
  ASSERT_TRUE(lock) << lock.error().message();

  auto seen = std::make_shared<FirstWake>();
  options.observer = seen;
  options.log = timeline.sink("waiter");
  options.retry_delay = 30s;
  options.retry_jitter = 0ms;
  auto waiting = Client::create(options);
  auto waiter = std::async(std::launch::async, [&] {
    auto got = waiting->lock(key, {.ttl = 5s, .wait = 60s});
    return got && got->unlock();
  });
  auto subscribers = [&](test::RedisServer& server) {
    const auto reply = server.command({"PUBSUB", "SHARDNUMSUB", channel});
    return reply.elements.size() == 2 ? reply.elements[1].integer : -1;
  };
  auto within_5s = [](const std::function<bool()>& done) {
    return redlock::testing::eventually(done, 5s, 10ms);
  };
  ASSERT_TRUE(within_5s([&] { return seen->attempts > 0 && subscribers(old_master) == 1; }));

  timeline.mark("failing over");
  cluster.fail_over_to(replica);
  old_master.kill9();
  timeline.mark("failed over, the old master killed");
  EXPECT_TRUE(within_5s([&] { return subscribers(replica) == 1; }))
      << "the subscription was not made again on the promoted replica";
  // The holder's own client learns of the failover when its connection to the killed
  // master fails; a release sent before that goes to the dead server and is not confirmed.
  ASSERT_TRUE(within_5s([&] { return static_cast<bool>(lock->extend(20s)); }))
      << "the holder's client did not follow the failover";
  // So must the waiting client's commands, or the attempt the announcement wakes may meet
  // the dead master and back off as from an unreachable quorum (retry_delay 30 s here):
  // what is tested is the subscription.
  ASSERT_TRUE(within_5s([&] {
    auto status = waiting->status(key);
    return status && status->size() == 1 && (*status)[0].status == NodeStatus::held;
  })) << "the waiting client did not follow the failover";
  timeline.mark("subscribed on the promoted replica, both clients followed");
  ASSERT_TRUE(lock->unlock());
  timeline.mark("released");
  ASSERT_EQ(waiter.wait_for(8s), std::future_status::ready)
      << "the waiter was not woken; what both clients logged:\n"
      << timeline.text();
  EXPECT_TRUE(waiter.get());
  EXPECT_EQ(seen->first, static_cast<int>(WakeCause::announcement));
}

// A replica promoted after the client met the cluster is a server it never met while
// holding the member's keys: whatever its age, its grants do not count until the longest
// ttl has passed since it appeared (a failover to a replica the writes had not reached
// would otherwise hand out a held key).
TEST(ClusterShardFaults, APromotedReplicaIsGuardedAsALateMaster) {
  test::ShardedCluster cluster({.shards = 3, .replicas_per_shard = 1});
  const std::string key = key_off_the_seed(cluster, "shard-promoted:");
  test::RedisServer& replica = cluster.replica_of(cluster.owner_of(key));
  auto client = Client::create(member(cluster, 2s));
  {
    auto met = client->try_lock(beside(key, "meet"), 1s);
    ASSERT_TRUE(met) << met.error().message();
    ASSERT_TRUE(met->unlock());
  }
  cluster.fail_over_to(replica);
  const auto promoted = Clock::now();

  auto during = client->lock(key, {.ttl = 2s, .wait = 300ms});
  ASSERT_FALSE(during) << "the promoted replica's grant counted at once";
  expect_contains(during.error().message(), "guarded for another");
  expect_contains(during.error().message(), "shard 127.0.0.1:" + std::to_string(replica.port()));
  expect_contains(during.error().message(), "became a master after");

  auto after = client->lock(key, {.ttl = 2s, .wait = 5s});
  ASSERT_TRUE(after) << after.error().message();
  EXPECT_GE(Clock::now(), promoted + 2s);
  EXPECT_TRUE(after->unlock());
}

// A promoted replica that dies before the client learns who it is must not keep the
// member guarded once its slots have moved on: the cluster promotes its own replica (the
// old master) after the node timeout, which the client guards for the bound from when it
// sees it own slots again, and then the member counts once more.
TEST(ClusterShardFaults, AMasterThatLostItsSlotsNoLongerGuardsTheMember) {
  test::ShardedCluster cluster({.shards = 3, .replicas_per_shard = 1});
  const std::string key = key_off_the_seed(cluster, "shard-gone:");
  test::RedisServer& old_master = cluster.owner_of(key);
  test::RedisServer& replica = cluster.replica_of(old_master);
  auto client = Client::create(member(cluster, 1s));
  {
    auto met = client->try_lock(beside(key, "meet"), 1s);
    ASSERT_TRUE(met) << met.error().message();
    ASSERT_TRUE(met->unlock());
  }
  cluster.fail_over_to(replica);
  replica.kill9();
  // The client meets the promoted replica only now, through the old master's MOVED: its
  // connection fails before it can say who it is.
  auto during = client->lock(key, {.ttl = 1s, .wait = 300ms});
  ASSERT_FALSE(during) << "a dead master's slot granted";
  // The cluster's own failover: seconds, more on a loaded machine.
  const auto gave_up = Clock::now() + 45s;
  while (old_master.command({"ROLE"}).elements.at(0).str != "master") {
    ASSERT_LT(Clock::now(), gave_up) << "the cluster did not promote the old master back";
    std::this_thread::sleep_for(20ms);
  }
  const auto promoted_back = Clock::now();
  auto after = client->lock(key, {.ttl = 1s, .wait = 10s});
  ASSERT_TRUE(after) << after.error().message();
  // Its replication id changed twice meanwhile: guarded from when the client saw it again.
  EXPECT_GE(Clock::now(), promoted_back + 1s);
  EXPECT_TRUE(after->unlock());
}

// One shard master that accepts connections and answers nothing (paused) holds back the
// keys of its own slots, not the whole member: a new client that guards young members
// waits to hear every master say who it is, and once the paused one's INFO has timed out
// (connect_timeout) the other shards' grants count.
TEST(ClusterShardFaults, ASilentShardMasterHoldsBackOnlyTheKeysOfItsSlots) {
  // The other shards keep serving while one master is down, as a cluster that needs no
  // full coverage does.
  test::ShardedCluster cluster({.server_args = {"--cluster-require-full-coverage", "no"}});
  const std::string silent_key = key_off_the_seed(cluster, "silent:");
  test::RedisServer& silent = cluster.owner_of(silent_key);
  std::string other_key;
  for (int i = 0; other_key.empty() || &cluster.owner_of(other_key) == &silent; ++i) {
    other_key = "speaking:" + std::to_string(i);
  }
  Options options = member(cluster, 2s);
  options.member_guard.young_on_first_contact = true;
  options.connect_timeout = 300ms;
  silent.pause();
  struct Resume {
    test::RedisServer& server;
    ~Resume() { server.resume(); }
  } resume{silent};
  auto client = Client::create(options);
  auto other = client->lock(other_key, {.ttl = 2s, .wait = 3s});
  ASSERT_TRUE(other) << "a paused shard kept the member from counting: " << other.error().message();
  EXPECT_TRUE(other->unlock());
  auto on_silent = client->try_lock(silent_key, 2s);
  EXPECT_FALSE(on_silent) << "granted by a paused server";
}

// A release whose shard's connection failed is sent again when that shard's connection
// is back, not only when the member's home seed reconnects (it never dropped here): else
// the shard keeps our value, and refuses everyone, for the rest of the key's TTL.
TEST(ClusterShardFaults, AReleaseLostWithItsShardsConnectionIsSentAgainWhenTheShardIsBack) {
  test::ShardedCluster cluster;
  const std::string key = key_off_the_seed(cluster, "resend:");
  test::RedisServer& owner = cluster.owner_of(key);
  Options options = member(cluster, 20s);
  // The shard's connection stays down while the release is made.
  options.reconnect_min = 500ms;
  options.reconnect_max = 500ms;
  auto client = Client::create(options);
  auto lock = client->try_lock(key, 20s);
  ASSERT_TRUE(lock) << lock.error().message();
  // Every client connection of the key's master but the fixture's own.
  owner.command({"CLIENT", "KILL", "TYPE", "normal"});
  const auto released = Clock::now();
  (void)lock->unlock();
  const auto gave_up = released + 5s;
  while (!owner.command({"GET", key}).is_nil()) {
    ASSERT_LT(Clock::now(), gave_up) << "the release was not sent again";
    std::this_thread::sleep_for(20ms);
  }
  std::printf(
      "released on the shard %lld ms after the failed release\n",
      static_cast<long long>(
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - released).count()));
}

// A release must not overtake its own acquire when the key's slot moves with the acquire
// in flight: the acquire, held up at the old owner, comes back MOVED and is re-sent to the
// new owner. A release made after the client learned the new owner went straight there,
// found nothing, and the acquire re-sent after it kept the key for its whole TTL. Three
// members (the cluster and two standalone masters) so that the lock is held while the
// cluster's acquire is still in flight.
TEST(ClusterShardFaults, AReleaseDoesNotOvertakeItsAcquireWhenTheSlotMoves) {
  test::ShardedCluster cluster({.server_args = {"--cluster-require-full-coverage", "no"}});
  test::RedisServer first;
  test::RedisServer second;
  const std::string key = key_off_the_seed(cluster, "overtaken:");
  test::RedisServer& old_owner = cluster.owner_of(key);
  // A key of a slot another master owns: its MOVED makes the client read the new map.
  std::string other_key;
  for (int i = 0; other_key.empty() || &cluster.owner_of(other_key) == &old_owner; ++i) {
    other_key = "mover:" + std::to_string(i);
  }
  test::RedisServer* new_owner = nullptr;
  for (std::size_t i = 0; i < cluster.servers(); ++i) {
    auto& server = cluster.server(i);
    if (&server != &old_owner && &server != &cluster.owner_of(other_key)) new_owner = &server;
  }
  ASSERT_NE(new_owner, nullptr);
  const auto slot_of = [&](const std::string& name) {
    return static_cast<std::uint16_t>(
        cluster.server(0).command({"CLUSTER", "KEYSLOT", name}).integer);
  };
  Options options;
  options.nodes = {cluster.url(), first.url(), second.url()};
  options.node_timeout = 2s;  // the acquire held up at the old owner outlives the pause
  options.member_guard.observed_restarts = false;
  auto client = Client::create(options);
  for (const auto& warm : {key, other_key}) {
    auto met = client->try_lock(warm, 10s);
    ASSERT_TRUE(met) << met.error().message();
    ASSERT_TRUE(met->unlock());
  }
  cluster.move_slot(slot_of(key), *new_owner);
  cluster.move_slot(slot_of(other_key), *new_owner);

  old_owner.pause();
  struct Resume {
    test::RedisServer& server;
    ~Resume() { server.resume(); }
  } resume{old_owner};
  // Granted by the two standalone masters; the cluster's acquire waits at the old owner.
  auto lock = client->try_lock(key, 10s);
  ASSERT_TRUE(lock) << lock.error().message();
  {
    auto moved = client->try_lock(other_key, 10s);
    ASSERT_TRUE(moved) << moved.error().message();
    ASSERT_TRUE(moved->unlock());
  }
  std::this_thread::sleep_for(300ms);  // the map the MOVED asked for
  EXPECT_TRUE(lock->unlock());
  old_owner.resume();
  std::this_thread::sleep_for(1s);
  EXPECT_TRUE(new_owner->command({"GET", key}).is_nil())
      << "the acquire re-sent after the release kept the key on the new owner";
}

}  // namespace
}  // namespace redlock

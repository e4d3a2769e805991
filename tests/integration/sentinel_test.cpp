// Sentinel groups as Redlock members, against real sentinels, masters and replicas: a
// lock on five groups, a failover while locks are held and waiters wait, groups mixed
// with standalone masters, and the errors of sentinels that cannot help.
//
// Five groups of a master, one replica and three sentinels (25 processes) are shared by
// the suite; a second replica per group would add five processes and test nothing more.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "support/redis_server.hpp"
#include "support/sentinel_group.hpp"

namespace redlock {
namespace {

// A fleet of one Sentinel group, or one without the fixture's replica acknowledgements:
// these tests are about resolving the master, not about a group with two masters, which
// create() refuses without a remedy (OptionsTest, SentinelGroupsThatMayVoteTwice...).
Options two_masters_allowed() {
  Options options;
  options.member_guard.allow_two_masters = true;
  return options;
}

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

class SentinelTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    groups_ = new std::vector<std::unique_ptr<test::SentinelGroup>>;
    for (int i = 0; i < 5; ++i) {
      test::SentinelGroupOptions options;
      options.master_name = "group" + std::to_string(i);
      options.replicas = 1;
      groups_->push_back(std::make_unique<test::SentinelGroup>(options));
    }
  }
  static void TearDownTestSuite() {
    delete groups_;
    groups_ = nullptr;
  }

  static test::SentinelGroup& group(std::size_t i) { return *groups_->at(i); }

  // These tests follow failovers and their guard, not a group with two masters: the
  // remedy create() asks for is waived (replica acknowledgements: replica_acks_test).
  static Options options(std::size_t members = 5) {
    Options options = two_masters_allowed();
    for (std::size_t i = 0; i < members; ++i) options.nodes.push_back(group(i).url());
    return options;
  }

  static std::string get(test::RedisServer& server, const std::string& key) {
    return test::SentinelGroup::ask(server, {"GET", key}).str;
  }

  // The key's value once it is `expected`, or after a second: a call returns at the
  // quorum's decision, and the other members' replies land a little later.
  static std::string settled(test::RedisServer& server, const std::string& key,
                             const std::string& expected) {
    std::string value = get(server, key);
    for (int tries = 0; value != expected && tries < 1000; ++tries) {
      std::this_thread::sleep_for(1ms);
      value = get(server, key);
    }
    return value;
  }

  // Locks `key` until member `member`'s grant is on `master` (a grant whose key is not
  // there came from a server the member no longer is), for at most `within`.
  static ::testing::AssertionResult follows(Client& client, std::size_t member,
                                            test::RedisServer& master, const std::string& key,
                                            Clock::duration within) {
    const auto deadline = Clock::now() + within;
    while (Clock::now() < deadline) {
      auto probe = client.try_lock(key, 5s);
      if (!probe) return ::testing::AssertionFailure() << probe.error().message();
      const bool there = probe->nodes()[member].status == NodeStatus::granted &&
                         get(master, key) == probe->value();
      if (!probe->unlock()) return ::testing::AssertionFailure() << "unlock failed";
      if (there) return ::testing::AssertionSuccess();
      std::this_thread::sleep_for(5ms);
    }
    return ::testing::AssertionFailure() << "member " << member << " not followed in time";
  }

  static std::vector<std::unique_ptr<test::SentinelGroup>>* groups_;
};

long long ms(Clock::duration span) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(span).count();
}

// The client's log lines (Options::log), for failures no call returns: a member's
// connection failing while no command waits on it.
struct LogLines {
  std::shared_ptr<std::mutex> mutex = std::make_shared<std::mutex>();
  std::shared_ptr<std::vector<std::string>> lines = std::make_shared<std::vector<std::string>>();

  LogSink sink() const {
    return [mutex = mutex, lines = lines](LogLevel, std::string_view line) {
      std::lock_guard<std::mutex> hold(*mutex);
      lines->emplace_back(line);
    };
  }
  ::testing::AssertionResult contain(const std::string& part) const {
    std::lock_guard<std::mutex> hold(*mutex);
    for (const auto& line : *lines) {
      if (line.find(part) != std::string::npos) return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure()
           << "no log line says: " << part << "; lines: " << ::testing::PrintToString(*lines);
  }
};

std::vector<std::unique_ptr<test::SentinelGroup>>* SentinelTest::groups_ = nullptr;

TEST_F(SentinelTest, FiveGroupsGrantALockOnTheMastersTheirSentinelsName) {
  auto client = Client::create(options());
  auto lock = client->try_lock("sentinel:five", 10s);
  ASSERT_TRUE(lock) << lock.error().message();
  ASSERT_EQ(lock->nodes().size(), 5u);
  int granted = 0;
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(lock->nodes()[i].node, group(i).url());
    granted += lock->nodes()[i].status == NodeStatus::granted;
    // The key is on each master (the decision came at the third grant; the others still
    // applied it); a replica never accepted a write, it would have refused one.
    EXPECT_EQ(settled(group(i).master(), "sentinel:five", lock->value()), lock->value())
        << "group " << i;
  }
  EXPECT_GE(granted, 3);
  ASSERT_TRUE(lock->unlock());
  for (std::size_t i = 0; i < 5; ++i)
    EXPECT_EQ(settled(group(i).master(), "sentinel:five", ""), "");
}

TEST_F(SentinelTest, AnElectionOnSentinelGroupsKeepsItsRecordOnTheMasters) {
  auto a = Client::create(options());
  auto b = Client::create(options());
  Election first(a, "sentinel:election", "first", 10s);
  Election second(b, "sentinel:election", "second", 10s);
  auto leading = first.campaign();
  ASSERT_TRUE(leading) << leading.error().message();
  const std::string record =
      leading->lock().value() + " " + std::to_string(leading->term()) + " first";
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(settled(group(i).master(), "sentinel:election:leader", record), record)
        << "group " << i;
  }
  auto seen = second.leader();
  ASSERT_TRUE(seen) << seen.error().message();
  ASSERT_TRUE(*seen);
  EXPECT_EQ((*seen)->identity, "first");
  EXPECT_EQ((*seen)->term, leading->term());
  ASSERT_TRUE(leading->resign());
  auto next = second.campaign({}, 5s);
  ASSERT_TRUE(next) << next.error().message();
  EXPECT_GT(next->term(), leading->term());
}

TEST_F(SentinelTest, GroupsMixWithStandaloneMasters) {
  test::RedisServer first;
  test::RedisServer second;
  Options mixed = two_masters_allowed();
  mixed.nodes = {first.url(), group(1).url(), second.url()};
  auto client = Client::create(mixed);
  auto lock = client->try_lock("sentinel:mixed", 10s);
  ASSERT_TRUE(lock) << lock.error().message();
  EXPECT_EQ(settled(first, "sentinel:mixed", lock->value()), lock->value());
  EXPECT_EQ(settled(group(1).master(), "sentinel:mixed", lock->value()), lock->value());
  EXPECT_EQ(settled(second, "sentinel:mixed", lock->value()), lock->value());
  ASSERT_TRUE(lock->unlock());
}

TEST_F(SentinelTest, ASentinelThatIsDownIsSkipped) {
  // A port that nothing listens on, first in the list: the next sentinel is asked at once.
  test::RedisServer gone;
  const std::uint16_t dead = gone.port();
  gone.kill9();
  std::string url = group(2).url();
  url.insert(std::string("redis-sentinel://").size(), "127.0.0.1:" + std::to_string(dead) + ",");
  Options one = two_masters_allowed();
  one.nodes = {url};
  auto client = Client::create(one);
  auto lock = client->try_lock("sentinel:skip", 10s);
  ASSERT_TRUE(lock) << lock.error().message();
  EXPECT_EQ(settled(group(2).master(), "sentinel:skip", lock->value()), lock->value());
  ASSERT_TRUE(lock->unlock());
}

TEST(SentinelOptions, TheSameGroupListedTwiceIsADuplicate) {
  Options twice = two_masters_allowed();
  twice.nodes = {"redis-sentinel://127.0.0.1:26380,127.0.0.1:26379/orders",
                 "redis-sentinel://:pw@127.0.0.1:26379,127.0.0.1:26380/orders/2",
                 "redis-sentinel://127.0.0.1:26379,127.0.0.1:26380/other"};
  try {
    Client::create(twice);
    FAIL() << "accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_THAT(error.what(), HasSubstr("nodes: duplicate node "
                                        "sentinel:orders,127.0.0.1:26379,127.0.0.1:26380 "
                                        "(entries 1 and 2)"));
  }
  twice.nodes.pop_back();
  twice.nodes.back() = "redis-sentinel://127.0.0.1:26379/orders";  // another set: allowed
  EXPECT_NO_THROW(Client::create(twice));
}

// The URL's credentials are the master's; the sentinels' are Options::sentinel_*.
TEST(SentinelCredentials, SentinelsThatRequireAPasswordGetTheirOwn) {
  test::SentinelGroupOptions guarded;
  guarded.replicas = 1;
  guarded.sentinels = 1;
  guarded.quorum = 1;
  guarded.sentinel_password = "sentinel-secret";
  test::SentinelGroup group(guarded);

  Options without = two_masters_allowed();
  without.nodes = {group.url()};
  auto refused = Client::create(without)->try_lock("sentinel:auth", 10s);
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().nodes().at(0).detail,
              HasSubstr("sentinel 127.0.0.1:" + std::to_string(group.sentinel(0).port()) +
                        " (master 'redlock') answered NOAUTH"));

  Options with = without;
  with.sentinel_password = "sentinel-secret";
  auto client = Client::create(with);
  auto lock = client->try_lock("sentinel:auth", 10s);
  ASSERT_TRUE(lock) << lock.error().message();
  EXPECT_EQ(test::SentinelGroup::ask(group.master(), {"GET", "sentinel:auth"}).str, lock->value());
  ASSERT_TRUE(lock->unlock());
}

// Sentinels may disagree: one that names a replica (here a sentinel that watches the
// replica's address under the group's name, as a stale one would) is not believed. The
// server it names answers ROLE as a replica, so nothing is sent to it, and the next
// look-up starts with another sentinel, which names the master.
TEST(SentinelDisagreement, ASentinelThatNamesAReplicaIsNotBelieved) {
  test::SentinelGroupOptions small;
  small.replicas = 1;
  small.sentinels = 1;
  small.quorum = 1;
  test::SentinelGroup group(small);
  test::RedisServer& replica = group.server(1);
  test::RedisServerOptions stale_options;
  stale_options.sentinel_config =
      "sentinel monitor redlock 127.0.0.1 " + std::to_string(replica.port()) + " 1\n";
  test::RedisServer stale(stale_options);

  LogLines log;
  Options options = two_masters_allowed();
  options.nodes = {"redis-sentinel://127.0.0.1:" + std::to_string(stale.port()) +
                   ",127.0.0.1:" + std::to_string(group.sentinel(0).port()) + "/redlock"};
  options.log = log.sink();
  auto client = Client::create(options);
  const auto deadline = Clock::now() + 5s;
  Result<Lock> lock = client->try_lock("sentinel:disagree", 10s);
  while (!lock && Clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
    lock = client->try_lock("sentinel:disagree", 10s);
  }
  ASSERT_TRUE(lock) << lock.error().message();
  EXPECT_EQ(test::SentinelGroup::ask(group.master(), {"GET", "sentinel:disagree"}).str,
            lock->value());
  EXPECT_TRUE(
      log.contain("ROLE on master 'redlock' at 127.0.0.1:" + std::to_string(replica.port()) +
                  " (named by sentinel 127.0.0.1:" + std::to_string(stale.port()) +
                  ") answered 'slave', not master"));
  ASSERT_TRUE(lock->unlock());
}

// A client meeting a group right after a failover, with the young-member rule on (the
// CLI's default): the promoted replica has run as long as the old master, so its uptime
// says nothing; the time its sentinel has known it as master does, and the group's grants
// do not count until that plus longest_ttl.
TEST(SentinelYoungMaster, AReplicaPromotedMomentsAgoIsGuardedOnFirstContact) {
  test::SentinelGroupOptions small;
  small.replicas = 1;
  small.sentinels = 1;
  small.quorum = 1;
  test::SentinelGroup group(small);
  Options options = two_masters_allowed();
  options.nodes = {group.url()};
  options.member_guard.young_on_first_contact = true;
  options.member_guard.longest_ttl = 3s;
  // Servers and sentinel older than the bound: a first contact counts the group.
  std::this_thread::sleep_for(3500ms);
  {
    auto client = Client::create(options);
    auto lock = client->try_lock("sentinel:young-master", 2s);
    ASSERT_TRUE(lock) << "before the failover: " << lock.error().message();
    ASSERT_TRUE(lock->unlock());
  }
  group.failover(test::SentinelGroup::Until::switched);
  const auto failed_over = Clock::now();
  {
    auto client = Client::create(options);
    auto lock = client->try_lock("sentinel:young-master", 2s);
    ASSERT_FALSE(lock) << "a replica promoted moments ago counted on first contact";
    EXPECT_NE(lock.error().message().find("role-reported-time"), std::string::npos)
        << lock.error().message();
  }
  // Once the promotion is longest_ttl old, a new client counts it again.
  std::this_thread::sleep_until(failed_over + 3500ms);
  auto client = Client::create(options);
  auto lock = client->try_lock("sentinel:young-master", 2s);
  ASSERT_TRUE(lock) << "after the bound: " << lock.error().message();
  ASSERT_TRUE(lock->unlock());
}

// A sentinel that accepts the connection but never answers (stopped) is given the
// connect timeout, then the next sentinel is asked.
TEST_F(SentinelTest, ASilentSentinelIsGivenUpAfterTheConnectTimeout) {
  test::RedisServer& silent = group(2).sentinel(0);
  const std::string port = std::to_string(silent.port());
  silent.pause();
  LogLines log;
  Options only_silent = two_masters_allowed();
  only_silent.nodes = {"redis-sentinel://127.0.0.1:" + port + "/group2"};
  only_silent.connect_timeout = 200ms;
  only_silent.log = log.sink();
  auto refused_client = Client::create(only_silent);
  std::this_thread::sleep_for(500ms);  // the first look-up has failed by then
  Options then_another = only_silent;
  then_another.log = nullptr;
  then_another.nodes = {"redis-sentinel://127.0.0.1:" + port +
                        ",127.0.0.1:" + std::to_string(group(2).sentinel(1).port()) + "/group2"};
  auto client = Client::create(then_another);
  auto lock = client->try_lock("sentinel:silent", 10s);
  for (int tries = 0; !lock && tries < 50; ++tries) {  // the first look-up takes 200 ms
    std::this_thread::sleep_for(20ms);
    lock = client->try_lock("sentinel:silent", 10s);
  }
  silent.resume();
  EXPECT_TRUE(log.contain("sentinel 127.0.0.1:" + port +
                          " (master 'group2'): no reply to SENTINEL GET-MASTER-ADDR-BY-NAME "
                          "within 200 ms"));
  ASSERT_TRUE(lock) << lock.error().message();
  EXPECT_EQ(settled(group(2).master(), "sentinel:silent", lock->value()), lock->value());
  ASSERT_TRUE(lock->unlock());
}

TEST_F(SentinelTest, AnUnknownMasterNameIsReportedWithEverySentinelsAnswer) {
  std::string url = group(3).url();
  url.replace(url.rfind('/') + 1, std::string::npos, "nosuchmaster");
  Options one = two_masters_allowed();
  one.nodes = {url};
  auto client = Client::create(one);
  auto lock = client->try_lock("sentinel:unknown", 10s);
  ASSERT_FALSE(lock);
  ASSERT_EQ(lock.error().nodes().size(), 1u);
  const NodeOutcome& outcome = lock.error().nodes()[0];
  EXPECT_EQ(outcome.node, url);
  EXPECT_EQ(outcome.error, make_error_code(errc::connection_error));
  EXPECT_THAT(outcome.detail,
              HasSubstr("no sentinel of master 'nosuchmaster' named a reachable master"));
  for (std::size_t i = 0; i < group(3).sentinel_count(); ++i) {
    EXPECT_THAT(outcome.detail,
                HasSubstr("sentinel 127.0.0.1:" + std::to_string(group(3).sentinel(i).port()) +
                          " (master 'nosuchmaster') does not monitor"));
  }
}

// Holds a lock on every group, with a waiter queued behind it, while group 0 fails over:
// the client follows the group to its new master (the lock is extended there, new locks
// are granted there), and the waiter still gets the lock once it is released.
TEST_F(SentinelTest, AFailoverIsFollowedWhileLocksAreHeldAndWaitersWait) {
  auto client = Client::create(options());
  auto holder = client->try_lock("sentinel:failover", 30s);
  ASSERT_TRUE(holder) << holder.error().message();
  test::RedisServer& old_master = group(0).master();

  auto waiter_client = Client::create(options());
  auto waiter = std::async(std::launch::async, [&] {
    return waiter_client->lock("sentinel:failover", {.ttl = 10s, .wait = 60s});
  });
  std::this_thread::sleep_for(200ms);  // the waiter is queued

  const auto started = Clock::now();
  const std::uint16_t new_port = group(0).failover();
  const auto failed_over = Clock::now();
  test::RedisServer& new_master = group(0).master();
  ASSERT_EQ(new_master.port(), new_port);
  ASSERT_NE(&new_master, &old_master);
  ASSERT_EQ(test::SentinelGroup::ask(old_master, {"ROLE"}).elements.at(0).str, "slave");
  // The promoted replica had received the grant before the failover.
  ASSERT_EQ(get(new_master, "sentinel:failover"), holder->value());

  // A new lock is granted by group 0, on its new master, once the client followed.
  ASSERT_TRUE(follows(*client, 0, new_master, "sentinel:after", 15s));
  // For the record: how long the sentinels took, and the client.
  std::cout << "failover (until the old master was demoted) took " << ms(failed_over - started)
            << " ms; followed " << ms(Clock::now() - failed_over) << " ms after that\n";
  // The old master, a replica now, follows the new one: the probes' keys reach it by
  // replication, and their deletes a moment later.
  const auto replicated = Clock::now() + 5s;
  while (get(old_master, "sentinel:after") != "" && Clock::now() < replicated) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(get(old_master, "sentinel:after"), "");

  // Extending reaches the new master: its TTL grows back to the extension's.
  std::this_thread::sleep_for(1100ms);
  ASSERT_TRUE(holder->extend(30s));
  // extend() returned at a quorum's decision; group 0 may answer a little later.
  long long left = 0;
  for (int tries = 0; tries < 1000 && left <= 29'000; ++tries) {
    left = test::SentinelGroup::ask(new_master, {"PTTL", "sentinel:failover"}).integer;
    if (left <= 29'000) std::this_thread::sleep_for(1ms);
  }
  EXPECT_GT(left, 29'000);

  ASSERT_EQ(waiter.wait_for(0s), std::future_status::timeout) << "the waiter got a held lock";
  const std::string held_value = holder->value();
  ASSERT_TRUE(holder->unlock());
  // The release reaches the new master (the unlock returned at a quorum of releases).
  EXPECT_NE(settled(new_master, "sentinel:failover", ""), held_value);
  ASSERT_EQ(waiter.wait_for(20s), std::future_status::ready) << "the waiter was lost";
  auto next = waiter.get();
  ASSERT_TRUE(next) << next.error().message();
  EXPECT_NE(next->value(), held_value);
  // The waiter's own client learns of the failover when its connection to the old master
  // drops, and may still be looking the new one up when the other four groups grant: its
  // group 0 then answered "not connected". Where group 0 granted, it was the new master.
  if (next->nodes()[0].status == NodeStatus::granted) {
    EXPECT_EQ(settled(new_master, "sentinel:failover", next->value()), next->value());
  }
  EXPECT_TRUE(next->unlock());
}

// A failover is a member that may have lost keys (replication is asynchronous): the
// promoted replica has another run_id, so a client that knew the group does not count
// the group's grants until member_guard.longest_ttl has passed (docs/safety.md).
TEST_F(SentinelTest, AFailedOverGroupsGrantsCountOnlyOnceTheGuardEnds) {
  struct Followed : Observer {
    std::mutex mutex;
    std::vector<std::string> masters;
    void on_node(const NodeEvent& event) override {
      if (event.kind != NodeEventKind::master_changed) return;
      std::lock_guard<std::mutex> hold(mutex);
      masters.emplace_back(std::string(event.node) + " -> " + std::string(event.detail));
    }
  };
  auto followed = std::make_shared<Followed>();
  auto guarded = options();
  guarded.member_guard.longest_ttl = 6s;
  guarded.observer = followed;
  auto client = Client::create(guarded);
  auto before = client->try_lock("sentinel:guard", 2s);
  ASSERT_TRUE(before) << before.error().message();
  EXPECT_TRUE(before->nodes()[2].counted);
  ASSERT_TRUE(before->unlock());

  const std::uint16_t new_port = group(2).failover(test::SentinelGroup::Until::switched);
  test::RedisServer& new_master = group(2).master();
  ASSERT_EQ(new_master.port(), new_port);
  const auto switched = Clock::now();
  // Member 2's outcome in a lock's result, once it answered from the new master.
  const auto on_new_master = [&](const Lock& lock) {
    return lock.nodes()[2].status == NodeStatus::granted &&
           get(new_master, "sentinel:guard") == lock.value();
  };
  bool seen_uncounted = false;
  while (!seen_uncounted && Clock::now() - switched < 5s) {
    auto probe = client->try_lock("sentinel:guard", 2s);
    ASSERT_TRUE(probe) << probe.error().message();  // four other groups make the quorum
    if (on_new_master(*probe)) {
      EXPECT_FALSE(probe->nodes()[2].counted) << "the new master's grant counted at once";
      seen_uncounted = true;
    }
    ASSERT_TRUE(probe->unlock());
    std::this_thread::sleep_for(5ms);
  }
  ASSERT_TRUE(seen_uncounted) << "the client did not reach the new master within 5 s";
  {
    // The failover the client followed is an event of the member, naming the new master.
    std::lock_guard<std::mutex> hold(followed->mutex);
    ASSERT_EQ(followed->masters.size(), 1u) << ::testing::PrintToString(followed->masters);
    EXPECT_NE(followed->masters[0].find(":" + std::to_string(new_port)), std::string::npos)
        << followed->masters[0];
  }

  // The guard runs from the client's reconnect, which follows the switch (the
  // announcement may reach it a moment before failover() saw every sentinel agree).
  bool counted = false;
  while (!counted && Clock::now() - switched < 15s) {
    auto probe = client->try_lock("sentinel:guard", 2s);
    ASSERT_TRUE(probe) << probe.error().message();
    counted = on_new_master(*probe) && probe->nodes()[2].counted;
    ASSERT_TRUE(probe->unlock());
    if (!counted) std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(counted) << "still guarded long after longest_ttl";
  // The client may reconnect a second or so before failover() has heard every sentinel
  // agree; a guard much shorter than longest_ttl (6 s) still shows.
  EXPECT_GE(Clock::now() - switched, 3s) << "the guard ended before longest_ttl";
}

// After a failover the sentinels ordered, the old master stays up and a master until
// the sentinels demote it, seconds later. A client that kept writing to it would grant a
// second holder there while clients that looked the group up afresh use the new master:
// the +switch-master announcement moves the client at once.
TEST_F(SentinelTest, TheClientLeavesTheOldMasterWhenTheSentinelsAnnounceTheSwitch) {
  auto client = Client::create(options());
  auto warm = client->try_lock("sentinel:warm", 5s);  // every member connected and resolved
  ASSERT_TRUE(warm) << warm.error().message();
  for (int tries = 0; warm->nodes()[4].status == NodeStatus::pending && tries < 100; ++tries) {
    std::this_thread::sleep_for(1ms);
  }
  ASSERT_TRUE(warm->unlock());
  test::RedisServer& old_master = group(4).master();

  const auto started = Clock::now();
  const std::uint16_t new_port = group(4).failover(test::SentinelGroup::Until::switched);
  const auto switched = Clock::now();
  test::RedisServer& new_master = group(4).master();
  ASSERT_EQ(new_master.port(), new_port);

  ASSERT_TRUE(follows(*client, 4, new_master, "sentinel:switch", 2s));
  std::cout << "failover took " << ms(switched - started) << " ms; followed "
            << ms(Clock::now() - switched) << " ms after the sentinels switched; the old "
            << "master is a " << test::SentinelGroup::ask(old_master, {"ROLE"}).elements.at(0).str
            << " now\n";
}

// The master dies: the client's connection drops, the sentinels keep naming the dead
// master until they agree it is down and promote the replica, and the client, asking
// again on each reconnect (paced by its backoff), reaches the new master on its own.
TEST_F(SentinelTest, AKilledMasterIsReplacedAndTheClientFindsTheNewOne) {
  auto client = Client::create(options());
  auto holder = client->try_lock("sentinel:killed", 30s);
  ASSERT_TRUE(holder) << holder.error().message();
  test::RedisServer& old_master = group(3).master();
  ASSERT_EQ(settled(old_master, "sentinel:killed", holder->value()), holder->value());
  // The replica has the grant before the master dies (else the group forgets it).
  test::RedisServer& replica =
      &group(3).server(0) == &old_master ? group(3).server(1) : group(3).server(0);
  ASSERT_EQ(settled(replica, "sentinel:killed", holder->value()), holder->value());

  const std::uint16_t old_port = old_master.port();
  const auto killed = Clock::now();
  old_master.kill9();
  const std::uint16_t new_port =
      group(3).wait_for_new_master(old_port, test::SentinelGroup::Until::switched);
  const auto switched = Clock::now();
  ASSERT_EQ(new_port, replica.port());

  ASSERT_TRUE(follows(*client, 3, replica, "sentinel:after-kill", 5s));
  std::cout << "master killed: the sentinels switched after " << ms(switched - killed)
            << " ms; the client followed " << ms(Clock::now() - switched) << " ms later\n";
  // The held lock is extended on the promoted replica.
  ASSERT_TRUE(holder->extend(30s));
  EXPECT_GT(test::SentinelGroup::ask(replica, {"PTTL", "sentinel:killed"}).integer, 29'000);
  ASSERT_TRUE(holder->unlock());
}

}  // namespace
}  // namespace redlock

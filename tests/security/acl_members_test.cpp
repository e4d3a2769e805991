// The ACL rules of docs/security.md for a Sentinel group member and a Redis Cluster
// member, run as users would run them, on real groups and clusters: with the documented
// rule every call works (a lock, extend and release, a fenced lock, a waiter woken by the
// release's announcement, a counting semaphore, a grant acknowledged by a replica) and no
// node is reported misconfigured; a rule without any one of its words is told to the
// caller naming the node and the refusal, or is a documented fallback, or is one of the
// few refusals the client does not report (Symptom says which); and the member guard
// still sees a failover or a shard master restarted empty.
//
// Each fixture's servers carry the documented user and, beside it, one user per word of
// the rule that lacks that word, so one group and one cluster serve every variant.

#include <gtest/gtest.h>

#include <cctype>
#include <chrono>
#include <future>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "lock_user_rule.hpp"
#include "support/redis_server.hpp"
#include "support/sentinel_group.hpp"
#include "support/sharded_cluster.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using security_test::lock_user;
using security_test::lock_user_password;

const std::string sentinel_user = "sentinel-locker";
const std::string sentinel_user_password = "sentinel-locker-secret";

long long ms(Clock::duration span) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(span).count();
}

// The user whose rule lacks `word`, named fit for a URL ("+cluster|shards" ->
// "lacks-cluster-shards", "~{lock:*" -> "lacks-keys-braced-lock").
std::string lacking(const std::string& word) {
  std::string name = "lacks";
  bool gap = true;
  for (char c : word) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      if (gap) name += '-';
      gap = false;
      name += c;
    } else {
      if (c == '~') name += "-keys";
      if (c == '&') name += "-channels";
      if (c == '{') name += "-braced";
      gap = true;
    }
  }
  return name;
}

// The words of `rule` that grant something: those an operator may forget.
std::vector<std::string> granting(const std::vector<std::string>& rule) {
  std::vector<std::string> words;
  for (const auto& word : rule) {
    if (word != "resetkeys" && word != "resetchannels" && word != "-@all") words.push_back(word);
  }
  return words;
}

// The documented user and one user per word of `rule` that lacks it, as server arguments.
std::vector<std::string> users_of(const std::string& name, const std::string& password,
                                  const std::vector<std::string>& rule,
                                  const std::vector<std::string>& words) {
  auto arguments = security_test::user_arguments(name, password, rule);
  for (const auto& word : words) {
    auto one =
        security_test::user_arguments(lacking(word), password, security_test::without(rule, word));
    arguments.insert(arguments.end(), one.begin(), one.end());
  }
  return arguments;
}

// "redis-cluster://127.0.0.1:1,..." with `user`'s credentials after the scheme.
std::string with_credentials(const std::string& url, const std::string& user,
                             const std::string& password) {
  const auto scheme = url.find("://") + 3;
  return url.substr(0, scheme) + user + ":" + password + "@" + url.substr(scheme);
}

// What one run of every documented call as a user came to: the calls that failed, what
// the client reported on its own (misconfigured node events, warnings in the log), and
// what it did not report but the run saw (a waiter that was not woken by the release).
struct Told {
  std::vector<std::string> failed;
  std::vector<std::string> misconfigured;
  std::vector<std::string> warnings;
  std::vector<std::string> unreported;

  bool clean() const { return failed.empty() && misconfigured.empty() && unreported.empty(); }
  bool reported() const { return !failed.empty() || !misconfigured.empty() || !warnings.empty(); }
  std::string text() const {
    std::string out;
    for (const auto& [what, lines] :
         {std::pair{"failed", &failed}, std::pair{"misconfigured", &misconfigured},
          std::pair{"warning", &warnings}, std::pair{"unreported", &unreported}}) {
      for (const auto& line : *lines) out += std::string("\n  ") + what + ": " + line;
    }
    return out.empty() ? " nothing" : out;
  }
};

struct Heard : Observer {
  std::mutex mutex;
  std::vector<std::string> misconfigured;
  std::vector<std::string> warnings;
  std::vector<WakeCause> wakes;
  void on_node(const NodeEvent& event) override {
    if (event.kind != NodeEventKind::misconfigured) return;
    std::lock_guard<std::mutex> hold(mutex);
    misconfigured.emplace_back(std::string(event.node) + ": " + std::string(event.detail));
  }
  void on_wake(const WakeEvent& event) override {
    std::lock_guard<std::mutex> hold(mutex);
    wakes.push_back(event.cause);
  }
};

struct Exercise {
  std::shared_ptr<Heard> heard = std::make_shared<Heard>();
  Told told;

  // `options` observed by this run; a waiter retries only after 10 s, so that one woken
  // sooner was woken by the release's announcement.
  Options observed(Options options) {
    options.observer = heard;
    options.log = [heard = heard](LogLevel level, std::string_view line) {
      if (level < LogLevel::warning) return;
      std::lock_guard<std::mutex> hold(heard->mutex);
      heard->warnings.emplace_back(line);
    };
    options.retry_delay = 10s;
    options.retry_jitter = 0ms;
    options.node_timeout = 1s;
    options.reconnect_min = 5ms;
    options.reconnect_max = 50ms;
    return options;
  }
  void failed(const std::string& call, const Error& error) {
    told.failed.push_back(call + ": " + error.message());
  }
  Told finish() {
    std::lock_guard<std::mutex> hold(heard->mutex);
    told.misconfigured = heard->misconfigured;
    told.warnings = heard->warnings;
    return told;
  }
};

void lock_extend_unlock(Exercise& run, Client& client, const std::string& key) {
  auto lock = client.lock(key, {.ttl = 10s});
  if (!lock) return run.failed("lock", lock.error());
  if (auto extended = lock->extend(10s); !extended) run.failed("extend", extended.error());
  if (auto released = lock->unlock(); !released) run.failed("unlock", released.error());
}

void fenced(Exercise& run, Client& client, const std::string& key) {
  auto lock = client.lock(key, {.ttl = 10s, .fencing = true});
  if (!lock) return run.failed("fenced lock", lock.error());
  if (!lock->fencing_token()) run.told.unreported.emplace_back("fenced lock: no token");
  if (auto released = lock->unlock(); !released) run.failed("fenced unlock", released.error());
}

// `waiter` waits for `key` while `holder` (another client: within one client a release
// hands the key to a local waiter without an announcement) holds it, then releases it.
void woken(Exercise& run, Client& holder, Client& waiter, const std::string& key) {
  auto held = holder.lock(key, {.ttl = 20s});
  if (!held) return run.failed("holder's lock", held.error());
  auto waiting =
      std::async(std::launch::async, [&] { return waiter.lock(key, {.ttl = 10s, .wait = 4s}); });
  std::this_thread::sleep_for(300ms);  // the waiter's first attempt is refused
  const auto released = Clock::now();
  if (auto unlocked = held->unlock(); !unlocked) run.failed("holder's unlock", unlocked.error());
  auto got = waiting.get();
  const auto took = Clock::now() - released;
  if (!got) return run.failed("waiter", got.error());
  std::vector<WakeCause> wakes;
  {
    std::lock_guard<std::mutex> hold(run.heard->mutex);
    wakes = run.heard->wakes;
  }
  if (took > 2s || wakes.empty() || wakes.front() != WakeCause::announcement) {
    run.told.unreported.push_back(
        "waiter: got the lock " + std::to_string(ms(took)) + " ms after the release, woken by " +
        (wakes.empty() ? "nothing" : to_string(wakes.front())) + ", not by the announcement");
  }
  if (auto released_again = got->unlock(); !released_again) {
    run.failed("waiter's unlock", released_again.error());
  }
}

void permit(Exercise& run, Client& client, const std::string& key) {
  SemaphoreOptions two;
  two.permits = 2;
  two.lock.ttl = 10s;
  auto permit = client.acquire_permit(key, two);
  if (!permit) return run.failed("acquire_permit", permit.error());
  if (auto extended = permit->extend(10s); !extended) run.failed("permit extend", extended.error());
  if (auto released = permit->unlock(); !released) run.failed("permit unlock", released.error());
}

// What a run without one word of a rule comes to.
enum class Symptom {
  // A call fails, or the client reports the node misconfigured, naming the node and
  // `cause` (the server's refusal).
  named,
  // Nothing fails: the client does without (a documented fallback), or this run does not
  // reach the command.
  none,
};

struct Expected {
  std::string word;
  Symptom symptom = Symptom::named;
  std::string cause;
  // The node named, when not the one the suite names (a server's address).
  std::string node;
};

const std::string script_refused = "can't run this command or subcommand script";
// The owner checks read the lock under pcall (a key of another kind is "not ours") and
// answer any other refusal as the script's error, which then names no script.
const std::string owner_check_refused = "can't run this command or subcommand";

void expect(const Expected& expected, const Told& told, std::string node) {
  if (!expected.node.empty()) node = expected.node;
  SCOPED_TRACE("without " + expected.word + ":" + told.text());
  switch (expected.symptom) {
    case Symptom::named: {
      bool named = false;
      for (const auto* lines : {&told.failed, &told.misconfigured}) {
        for (const auto& line : *lines) {
          named = named || (line.find(node) != std::string::npos &&
                            line.find(expected.cause) != std::string::npos);
        }
      }
      EXPECT_TRUE(named) << "no failure or event names " << node << " and \"" << expected.cause
                         << "\"";
      break;
    }
    case Symptom::none:
      EXPECT_TRUE(told.clean());
      break;
  }
}

// ---------------------------------------------------------------------------------------
// A Sentinel group: a master, a replica (for WAIT 1 and a failover) and a sentinel.

std::vector<std::string> master_rule() {
  return security_test::joined(security_test::joined(security_test::sentinel_master_lock_rule(),
                                                     security_test::semaphore_additions()),
                               security_test::replica_ack_additions());
}

class AclSentinelMember : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    test::SentinelGroupOptions options;
    options.replicas = 1;
    options.sentinels = 1;
    options.quorum = 1;
    options.server_args =
        users_of(lock_user, lock_user_password, master_rule(), granting(master_rule()));
    options.sentinel_args =
        users_of(sentinel_user, sentinel_user_password, security_test::sentinel_user_rule(),
                 granting(security_test::sentinel_user_rule()));
    group_ = new test::SentinelGroup(options);
  }
  static void TearDownTestSuite() {
    delete group_;
    group_ = nullptr;
  }

  // As `user` on the master and `sentinel` on the sentinels, one member: the two-masters
  // remedy is waived unless the grants wait for the replica.
  static Options options(const std::string& user, const std::string& sentinel,
                         int replicas_to_ack = 0) {
    Options options;
    options.nodes = {with_credentials(group_->url(), user, lock_user_password)};
    options.sentinel_username = sentinel;
    options.sentinel_password = sentinel_user_password;
    options.member_guard.replicas_to_ack = replicas_to_ack;
    options.member_guard.allow_two_masters = replicas_to_ack == 0;
    return options;
  }

  static Told exercise(const std::string& user, const std::string& sentinel) {
    Exercise run;
    const std::string key = "lock:" + user + ":" + sentinel;
    {
      auto holder = Client::create(run.observed(options(user, sentinel)));
      auto waiter = Client::create(run.observed(options(user, sentinel)));
      lock_extend_unlock(run, *holder, key);
      fenced(run, *holder, key + ":fenced");
      woken(run, *holder, *waiter, key + ":woken");
      permit(run, *holder, key + ":permits");
    }
    auto acked = Client::create(run.observed(options(user, sentinel, 1)));
    lock_extend_unlock(run, *acked, key + ":acked");
    return run.finish();
  }

  static test::SentinelGroup* group_;
};

test::SentinelGroup* AclSentinelMember::group_ = nullptr;

TEST_F(AclSentinelMember, TheDocumentedRulesRunEveryCall) {
  const auto started = Clock::now();
  const Told told = exercise(lock_user, sentinel_user);
  EXPECT_TRUE(told.clean()) << told.text();
  std::cout << "every call as the documented users took " << ms(Clock::now() - started) << " ms\n";
}

TEST_F(AclSentinelMember, EachWordOfTheMastersRuleIsNeededOrAFallback) {
  const std::vector<Expected> words = {
      {"~lock:*", Symptom::named, "no permissions to access one of the keys"},
      {"&lock:*", Symptom::named, "can't publish to the channel"},
      {"+evalsha", Symptom::named, "no permissions to run the 'evalsha' command"},
      {"+eval", Symptom::named, "no permissions to run the 'eval' command"},
      {"+get", Symptom::named, owner_check_refused},
      {"+set", Symptom::named, "no permissions to run the 'set' command"},
      {"+del", Symptom::named, script_refused},
      {"+pexpire", Symptom::named, script_refused},
      {"+pttl", Symptom::named, script_refused},
      {"+incr", Symptom::named, script_refused},
      {"+publish", Symptom::named, script_refused},
      {"+subscribe", Symptom::named, "no permissions to run the 'subscribe' command"},
      // Sent when a waiter leaves; its answer is not awaited.
      {"+unsubscribe", Symptom::none, ""},
      // The member guard's event names the member, not the master that refused INFO.
      {"+info", Symptom::named, "grant the user +info", "redis-sentinel://lacks-info:***@"},
      {"+hello", Symptom::none, ""},
      {"+role", Symptom::named, "no permissions to run the 'role' command"},
      {"+type", Symptom::named, script_refused},
      {"+time", Symptom::named, script_refused},
      {"+zadd", Symptom::named, script_refused},
      {"+zrem", Symptom::named, script_refused},
      {"+zcard", Symptom::named, script_refused},
      {"+zrange", Symptom::named, script_refused},
      {"+zscore", Symptom::named, script_refused},
      // Called only for permits that expired in place.
      {"+zremrangebyscore", Symptom::none, ""},
      {"+wait", Symptom::named, "no permissions to run the 'wait' command"},
  };
  ASSERT_EQ(words.size(), granting(master_rule()).size()) << "a word of the rule is not checked";
  const std::string node = "127.0.0.1:" + std::to_string(group_->master().port());
  for (const auto& word : words) expect(word, exercise(lacking(word.word), sentinel_user), node);
}

TEST_F(AclSentinelMember, EachWordOfTheSentinelsRuleIsNeededOrAFallback) {
  const std::vector<Expected> words = {
      // The +switch-master watch, which only a failover exercises (the next test); a
      // refused SUBSCRIBE there goes unreported, and the client still follows a failover
      // when its connection to the old master drops.
      {"&+switch-master", Symptom::none, ""},
      {"+sentinel|get-master-addr-by-name", Symptom::named,
       "no permissions to run the 'sentinel|get-master-addr-by-name' command"},
      // The young-member rule falls back to the master's uptime.
      {"+sentinel|master", Symptom::none, ""},
      {"+subscribe", Symptom::none, ""},
  };
  ASSERT_EQ(words.size(), granting(security_test::sentinel_user_rule()).size());
  const std::string node = "sentinel 127.0.0.1:" + std::to_string(group_->sentinel(0).port());
  for (const auto& word : words) expect(word, exercise(lock_user, lacking(word.word)), node);
}

// Last of the suite: the group's master changes. A client that met the group sees the
// promoted replica's other run_id through the lock user's INFO, and refuses the lock as
// guarded; it learns of the switch from the sentinel user's +switch-master subscription.
TEST_F(AclSentinelMember, AFailoverIsGuardedAsTheLockUser) {
  Exercise run;
  Options guarded = run.observed(options(lock_user, sentinel_user));
  guarded.member_guard.longest_ttl = 5s;
  auto contender = Client::create(guarded);
  auto met = contender->try_lock("lock:guard", 3s);
  ASSERT_TRUE(met) << met.error().message();
  auto released = met->unlock();
  ASSERT_TRUE(released) << released.error().message();

  group_->failover(test::SentinelGroup::Until::switched);
  const auto switched = Clock::now();
  // Until the client moves, the old master (not yet demoted) may still grant.
  std::string refusal;
  while (refusal.find("guarded for another") == std::string::npos && Clock::now() - switched < 5s) {
    auto probe = contender->try_lock("lock:guard", 3s);
    if (probe) {
      // Granted by the old master; the release may reach the new one, which never had it.
      (void)probe->unlock();
    } else {
      refusal = probe.error().message();
    }
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_NE(refusal.find("guarded for another"), std::string::npos) << refusal;
  EXPECT_NE(refusal.find("run_id changed"), std::string::npos) << refusal;
  std::cout << "guarded " << ms(Clock::now() - switched) << " ms after the sentinels switched\n";
  const Told told = run.finish();
  EXPECT_TRUE(told.misconfigured.empty()) << told.text();
}

// ---------------------------------------------------------------------------------------
// A Redis Cluster of three shards without replicas (WAIT is refused on cluster members).

std::vector<std::string> cluster_rule() {
  return security_test::joined(security_test::cluster_lock_rule(),
                               security_test::semaphore_additions());
}

const std::string no_slot_map = "lacks-slot-maps";

class AclClusterMember : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto users = users_of(lock_user, lock_user_password, cluster_rule(), granting(cluster_rule()));
    const auto neither = security_test::user_arguments(
        no_slot_map, lock_user_password,
        security_test::without(security_test::without(cluster_rule(), "+cluster|shards"),
                               "+cluster|slots"));
    users.insert(users.end(), neither.begin(), neither.end());
    cluster_ = new test::ShardedCluster({.server_args = users});
    test::RedisServer& owner = cluster_->owner_of(asked_);
    importing_ = &owner == &cluster_->server(0) ? &cluster_->server(1) : &cluster_->server(0);
    asked_slot_ = static_cast<std::uint16_t>(owner.command({"CLUSTER", "KEYSLOT", asked_}).integer);
    cluster_->begin_migration(asked_slot_, *importing_);
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }

  static Options options(const std::string& user) {
    Options options;
    options.nodes = {with_credentials(cluster_->url(), user, lock_user_password)};
    return options;
  }

  // A key of a slot being migrated, which its owner answers with ASK: lock and release
  // need ASKING on the importing server.
  static Told exercise(const std::string& user) {
    Exercise run;
    const std::string key = "lock:" + user;
    auto holder = Client::create(run.observed(options(user)));
    auto waiter = Client::create(run.observed(options(user)));
    lock_extend_unlock(run, *holder, key);
    fenced(run, *holder, key + ":fenced");
    woken(run, *holder, *waiter, key + ":woken");
    permit(run, *holder, key + ":permits");
    lock_extend_unlock(run, *holder, asked_ + user);
    return run.finish();
  }

  static test::ShardedCluster* cluster_;
  static inline const std::string asked_ = "{lock:asked}:";
  static inline std::uint16_t asked_slot_ = 0;
  static inline test::RedisServer* importing_ = nullptr;
};

test::ShardedCluster* AclClusterMember::cluster_ = nullptr;

TEST_F(AclClusterMember, TheDocumentedRuleRunsEveryCall) {
  const auto started = Clock::now();
  const Told told = exercise(lock_user);
  EXPECT_TRUE(told.clean()) << told.text();
  std::cout << "every call as the documented user took " << ms(Clock::now() - started) << " ms\n";
}

TEST_F(AclClusterMember, EachWordOfTheRuleIsNeededOrAFallback) {
  const std::vector<Expected> words = {
      {"~lock:*", Symptom::named, "no permissions to access one of the keys"},
      {"~{lock:*", Symptom::named, "no permissions to access one of the keys"},
      // Needed only by a key with a hash tag of its own (lock:{orders}): its channel is
      // lock:{orders}:released; the others' are braced, {lock:...}:released.
      {"&lock:*", Symptom::none, ""},
      {"&{lock:*", Symptom::named, script_refused},
      {"+evalsha", Symptom::named, "no permissions to run the 'evalsha' command"},
      {"+eval", Symptom::named, "no permissions to run the 'eval' command"},
      {"+get", Symptom::named, owner_check_refused},
      {"+set", Symptom::named, "no permissions to run the 'set' command"},
      {"+del", Symptom::named, script_refused},
      {"+pexpire", Symptom::named, script_refused},
      {"+pttl", Symptom::named, script_refused},
      {"+incr", Symptom::named, script_refused},
      {"+spublish", Symptom::named, script_refused},
      {"+ssubscribe", Symptom::named, "no permissions to run the 'ssubscribe' command"},
      {"+sunsubscribe", Symptom::none, ""},
      {"+info", Symptom::named, "grant the user +info"},
      {"+hello", Symptom::none, ""},
      // Either slot map will do (CLUSTER SLOTS is asked when CLUSTER SHARDS is refused);
      // the next test takes both away.
      {"+cluster|shards", Symptom::none, ""},
      {"+cluster|slots", Symptom::none, ""},
      {"+asking", Symptom::named, "no permissions to run the 'asking' command"},
      {"+type", Symptom::named, script_refused},
      {"+time", Symptom::named, script_refused},
      {"+zadd", Symptom::named, script_refused},
      {"+zrem", Symptom::named, script_refused},
      {"+zcard", Symptom::named, script_refused},
      {"+zrange", Symptom::named, script_refused},
      {"+zscore", Symptom::named, script_refused},
      {"+zremrangebyscore", Symptom::none, ""},
  };
  ASSERT_EQ(words.size(), granting(cluster_rule()).size()) << "a word of the rule is not checked";
  for (const auto& word : words) expect(word, exercise(lacking(word.word)), "127.0.0.1:");
}

// Neither slot map: the member still locks, sending each key to a seed and following its
// MOVED, and says nothing of the refusals (docs/security.md says what that costs).
TEST_F(AclClusterMember, AUserThatMayReadNoSlotMapLocksByFollowingMoved) {
  const Told told = exercise(no_slot_map);
  EXPECT_TRUE(told.failed.empty() && told.unreported.empty()) << told.text();
  // Said once by each client (the run makes two): the guard then watches only the
  // masters a MOVED named.
  ASSERT_FALSE(told.misconfigured.empty()) << told.text();
  for (const auto& line : told.misconfigured) {
    EXPECT_NE(line.find("CLUSTER SHARDS and CLUSTER SLOTS refused"), std::string::npos)
        << told.text();
  }
}

// Last of the suite: a shard master restarts without persistence. A client that met the
// cluster sees its other run_id through the lock user's INFO and refuses the lock as
// guarded, naming the shard.
TEST_F(AclClusterMember, AShardMasterRestartedEmptyIsGuardedAsTheLockUser) {
  cluster_->move_slot(asked_slot_, *importing_);
  Exercise run;
  Options guarded = run.observed(options(lock_user));
  guarded.member_guard.longest_ttl = 5s;
  auto contender = Client::create(guarded);
  const std::string key = "lock:guard";
  auto met = contender->try_lock(key, 3s);
  ASSERT_TRUE(met) << met.error().message();
  auto released = met->unlock();
  ASSERT_TRUE(released) << released.error().message();

  test::RedisServer& owner = cluster_->owner_of(key);
  owner.kill9();
  owner.restart();
  cluster_->wait_consistent();
  auto during = contender->lock(key, {.ttl = 5s, .wait = 500ms});
  ASSERT_FALSE(during) << "the restarted shard's grant counted";
  EXPECT_NE(during.error().message().find("guarded for another"), std::string::npos)
      << during.error().message();
  EXPECT_NE(during.error().message().find("shard 127.0.0.1:" + std::to_string(owner.port())),
            std::string::npos)
      << during.error().message();
  EXPECT_NE(during.error().message().find("run_id changed"), std::string::npos)
      << during.error().message();
  const Told told = run.finish();
  EXPECT_TRUE(told.misconfigured.empty()) << told.text();
}

}  // namespace
}  // namespace redlock

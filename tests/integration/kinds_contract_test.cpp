// One set of promises for every kind of lock (lock, acquire_permit, read_lock,
// write_lock, lock_all), sync and async, on five real nodes, healthy and with nodes down:
// stop, wait = max, max_hold, fail_fast, the async callback contract, one node down
// while another owner holds the key, a minority of nodes up, and a wait that sleeps.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "support/lock_nodes_fixture.hpp"

namespace redlock::test {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;

enum class KindId { exclusive, permit, reader, writer, key_set };

std::string name_of(KindId kind) {
  switch (kind) {
    case KindId::exclusive:
      return "exclusive";
    case KindId::permit:
      return "permit";
    case KindId::reader:
      return "reader";
    case KindId::writer:
      return "writer";
    case KindId::key_set:
      return "key_set";
  }
  return "?";
}

std::vector<std::string> key_set(const std::string& key) {
  return {key, key + ":second"};
}

// The kind under test on `key`.
Result<Lock> acquire(Client& client, KindId kind, const std::string& key, LockOptions options) {
  switch (kind) {
    case KindId::exclusive:
      return client.lock(key, options);
    case KindId::permit:
      return client.acquire_permit(key, {.permits = 1, .quorum = 0, .lock = options});
    case KindId::reader:
      return client.read_lock(key, options);
    case KindId::writer:
      return client.write_lock(key, options);
    case KindId::key_set:
      return client.lock_all(key_set(key), options);
  }
  return Error(make_error_code(errc::invalid_argument), "unknown kind");
}

void acquire_async(Client& client, KindId kind, const std::string& key, LockOptions options,
                   Client::LockCallback callback) {
  switch (kind) {
    case KindId::exclusive:
      return client.lock_async(key, std::move(options), std::move(callback));
    case KindId::permit:
      return client.acquire_permit_async(
          key, {.permits = 1, .quorum = 0, .lock = std::move(options)}, std::move(callback));
    case KindId::reader:
      return client.read_lock_async(key, std::move(options), std::move(callback));
    case KindId::writer:
      return client.write_lock_async(key, std::move(options), std::move(callback));
    case KindId::key_set:
      return client.lock_all_async(key_set(key), std::move(options), std::move(callback));
  }
}

// A lock of another owner that keeps `kind` out of `key`: a writer keeps readers out, a
// reader keeps writers out, every other kind is kept out by one of its own.
Result<Lock> hold_against(Client& client, KindId kind, const std::string& key, milliseconds ttl) {
  LockOptions options{.ttl = ttl};
  switch (kind) {
    case KindId::reader:
      return client.write_lock(key, options);
    case KindId::writer:
      return client.read_lock(key, options);
    default:
      return acquire(client, kind, key, options);
  }
}

Result<Lock> acquire_via(bool async, Client& client, KindId kind, const std::string& key,
                         LockOptions options) {
  if (!async) return acquire(client, kind, key, std::move(options));
  std::promise<Result<Lock>> promise;
  auto future = promise.get_future();
  acquire_async(client, kind, key, std::move(options),
                [&promise](Result<Lock> result) { promise.set_value(std::move(result)); });
  return future.get();
}

// Voluntary context switches of every thread of this process so far.
long voluntary_switches() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_nvcsw;
}

struct Case {
  KindId kind;
  bool async;
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return name_of(info.param.kind) + (info.param.async ? "_async" : "_sync");
}

class KindsContract : public LockNodesTest, public ::testing::WithParamInterface<Case> {
 protected:
  std::string key() const {
    return "contract:" + name_of(GetParam().kind) + (GetParam().async ? ":a" : ":s");
  }
  Result<Lock> take(Client& client, LockOptions options) {
    return acquire_via(GetParam().async, client, GetParam().kind, key(), std::move(options));
  }
};

TEST_P(KindsContract, AStopRequestedWhileWaitingEndsTheWaitWithCancelled) {
  auto client = Client::create(options());
  auto held = hold_against(*client, GetParam().kind, key(), 10s);
  ASSERT_TRUE(held) << held.error().message();
  std::stop_source stop;
  std::thread stopper([&] {
    std::this_thread::sleep_for(200ms);
    stop.request_stop();
  });
  const auto started = std::chrono::steady_clock::now();
  auto waited = take(*client, {.ttl = 10s, .wait = 5s, .stop = stop.get_token()});
  const auto took = std::chrono::steady_clock::now() - started;
  stopper.join();
  ASSERT_FALSE(waited);
  EXPECT_EQ(waited.error(), errc::cancelled) << waited.error().message();
  EXPECT_LT(took, 2s) << "the stop was not honoured while waiting";
}

TEST_P(KindsContract, AStopRequestedBeforeTheCallMakesNoAttempt) {
  auto client = Client::create(options());
  std::stop_source stop;
  stop.request_stop();
  const auto before = calls({"evalsha", "eval", "set"});
  auto refused = take(*client, {.ttl = 10s, .wait = 5s, .stop = stop.get_token()});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), errc::cancelled);
  EXPECT_EQ(calls({"evalsha", "eval", "set"}), before + 0) << "an attempt was sent";
}

TEST_P(KindsContract, WaitMaxWaitsUntilTheHolderLeaves) {
  auto client = Client::create(options());
  auto held = hold_against(*client, GetParam().kind, key(), 10s);
  ASSERT_TRUE(held) << held.error().message();
  std::thread releaser([&] {
    std::this_thread::sleep_for(300ms);
    (void)held->unlock();
  });
  auto waited = take(*client, {.ttl = 10s, .wait = milliseconds::max()});
  releaser.join();
  ASSERT_TRUE(waited) << waited.error().message();
}

// Waiting costs nothing while nothing happens: a waiter whose next retry is seconds away
// sleeps until the holder's release is announced (here it never is). Every thread of the
// client counts, the one that runs the loop included (polling it every millisecond
// would switch about 600 times).
TEST_P(KindsContract, AWaiterSleepsWhileTheKeyIsHeld) {
  auto holder = Client::create(options());
  auto held = hold_against(*holder, GetParam().kind, key(), 10s);
  ASSERT_TRUE(held) << held.error().message();
  auto waiter = Client::create(slow_polling());
  ASSERT_FALSE(take(*waiter, {.ttl = 10s}));  // connected, subscribed: nothing left to set up
  const long switches_before = voluntary_switches();
  auto waited = take(*waiter, {.ttl = 10s, .wait = 600ms});
  const long switches = voluntary_switches() - switches_before;
  ASSERT_FALSE(waited);
  EXPECT_LT(switches, 100) << "the client's threads woke " << switches
                           << " times in 600 ms of waiting";
}

// So it is while attempts fail slowly: with three nodes paused each attempt waits for
// their node timeouts while the other two answer, and between attempts the waiter
// sleeps until its next retry.
TEST_P(KindsContract, AWaiterSleepsThroughSlowAttemptsWithAMinorityUp) {
  auto waiter = Client::create(options(50ms));
  ASSERT_TRUE(take(*waiter, {.ttl = 10s}));  // connected: nothing left to set up
  for (std::size_t node : {0, 1, 2}) cluster()[node].pause();
  const long switches_before = voluntary_switches();
  auto waited = take(*waiter, {.ttl = 10s, .wait = 600ms});
  const long switches = voluntary_switches() - switches_before;
  ASSERT_FALSE(waited);
  EXPECT_EQ(waited.error(), errc::quorum_unreachable) << waited.error().message();
  EXPECT_LT(switches, 100) << "the client's threads woke " << switches
                           << " times in 600 ms of waiting";
}

TEST_P(KindsContract, MaxHoldStopsTheWatchdogAndReportsTheLimit) {
  auto client = Client::create(options());
  std::promise<Error> lost;
  auto lost_future = lost.get_future();
  std::atomic<bool> reported{false};
  auto lock = take(*client, {.ttl = 600ms,
                             .auto_extend = true,
                             .on_lost =
                                 [&](const Error& error) {
                                   if (!reported.exchange(true)) lost.set_value(error);
                                 },
                             .max_hold = 1s});
  ASSERT_TRUE(lock) << lock.error().message();
  ASSERT_EQ(lost_future.wait_for(5s), std::future_status::ready) << "max_hold was ignored";
  EXPECT_EQ(lost_future.get(), errc::hold_limit_reached);
  EXPECT_TRUE(lock->lost());
}

TEST_P(KindsContract, FailFastGivesUpAtOnceWithThreeNodesDown) {
  auto client = Client::create(options());
  for (std::size_t node : {0, 2, 4}) cluster()[node].kill9();
  const auto started = std::chrono::steady_clock::now();
  auto refused = take(*client, {.ttl = 10s, .wait = 3s, .fail_fast = true});
  const auto took = std::chrono::steady_clock::now() - started;
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), errc::quorum_unreachable) << refused.error().message();
  EXPECT_LT(took, 1500ms) << "fail_fast waited out the wait";
  // Every node's answer is in the error, the healthy ones included.
  EXPECT_EQ(refused.error().nodes().size(), 5u);
  for (const auto& node : refused.error().nodes()) {
    EXPECT_NE(node.status, NodeStatus::pending) << describe(node);
  }
}

TEST_P(KindsContract, WithOneNodeDownAHeldLockIsAConflictAndAWaiterGetsItWhenReleased) {
  cluster()[1].kill9();
  auto holder = Client::create(options());
  auto waiter = Client::create(options());
  auto held = hold_against(*holder, GetParam().kind, key(), 10s);
  ASSERT_TRUE(held) << held.error().message();
  auto once = take(*waiter, {.ttl = 10s});
  ASSERT_FALSE(once);
  EXPECT_EQ(once.error(), errc::conflict) << once.error().message();
  // fail_fast gives up only on an unreachable quorum: one node down is not that.
  std::thread releaser([&] {
    std::this_thread::sleep_for(300ms);
    (void)held->unlock();
  });
  auto waited = take(*waiter, {.ttl = 10s, .wait = 5s, .fail_fast = true});
  releaser.join();
  ASSERT_TRUE(waited) << waited.error().message();
}

TEST_P(KindsContract, WithAMinorityUpAWaiterSendsABoundedNumberOfCommands) {
  auto client = Client::create(options());
  for (std::size_t node : {0, 1, 2}) cluster()[node].kill9();
  const auto info_calls = [](std::size_t node) {
    const std::string info = cluster()[node].command({"INFO", "stats"}).str;
    const std::string field = "total_commands_processed:";
    const auto at = info.find(field);
    return at == std::string::npos ? 0LL : std::stoll(info.substr(at + field.size()));
  };
  const auto before = info_calls(3);
  auto refused = take(*client, {.ttl = 10s, .wait = 2s});
  const auto sent = info_calls(3) - before;
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), errc::quorum_unreachable);
  // Backing off from the 100 ms retry delay, 2 s hold about ten attempts of a few
  // commands each (the attempt, its release, the waiter's subscription).
  EXPECT_LT(sent, 150) << "a waiter hammered the surviving node";
}

TEST_P(KindsContract, AThrowingCallbackIsContainedAndItsLockReleased) {
  if (!GetParam().async) GTEST_SKIP() << "callbacks are the async forms'";
  auto client = Client::create(options());
  std::promise<void> called;
  acquire_async(*client, GetParam().kind, key(), {.ttl = 10s}, [&](Result<Lock> lock) {
    EXPECT_TRUE(lock) << lock.error().message();
    called.set_value();
    throw std::runtime_error("thrown by the application");
  });
  called.get_future().wait();
  // The process is alive, the client works, and the Lock dropped by the throw released
  // the key.
  EXPECT_TRUE(eventually([&] {
    auto again = acquire(*client, GetParam().kind, key(), {.ttl = 10s});
    return again.has_value();
  }));
}

TEST_P(KindsContract, AnEmptyCallbackAcquiresNothing) {
  if (!GetParam().async) GTEST_SKIP() << "callbacks are the async forms'";
  auto client = Client::create(options());
  const auto before = calls({"evalsha", "eval", "set"});
  acquire_async(*client, GetParam().kind, key(), {.ttl = 10s}, Client::LockCallback{});
  auto lock = acquire(*client, GetParam().kind, key(), {.ttl = 10s});
  ASSERT_TRUE(lock) << lock.error().message();
  EXPECT_GT(calls({"evalsha", "eval", "set"}), before);
}

// A release that could not reach a node because its connection dropped is sent again once
// the node is back, for every kind: otherwise the node keeps our entry, and refuses the
// others, for the rest of its TTL. The node persists every write (AOF, fsync always), so
// what it held survives its restart and only a release sent again removes it.
TEST_P(KindsContract, AReleaseLostWithItsConnectionIsSentAgainAfterTheReconnect) {
  test::RedisServer durable({.appendonly_always = true});
  auto client_options = options(100ms);
  client_options.nodes[0] = durable.url();
  auto client = Client::create(client_options);
  auto held = take(*client, {.ttl = 30s});
  ASSERT_TRUE(held) << held.error().message();
  std::vector<std::string> keys{key()};
  if (GetParam().kind == KindId::key_set) keys = key_set(key());
  const auto holds_all = [&] {
    for (const auto& k : keys) {
      if (durable.command({"EXISTS", k}).integer != 1) return false;
    }
    return true;
  };
  // The quorum may have been decided before the durable node (fsync on every write)
  // answered.
  for (int i = 0; i < 100 && !holds_all(); ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(holds_all()) << "the durable node never took the lock";
  durable.kill9();
  EXPECT_TRUE(held->unlock());  // four of five confirm; the fifth is down
  durable.restart();
  const auto deadline = std::chrono::steady_clock::now() + 3s;
  const auto holds_any = [&] {
    for (const auto& k : keys) {
      if (durable.command({"EXISTS", k}).integer != 0) return true;
    }
    return false;
  };
  while (std::chrono::steady_clock::now() < deadline && holds_any()) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_FALSE(holds_any()) << "the restarted node still holds the released lock";
}

TEST_P(KindsContract, NothingIsHandedOutAfterClose) {
  auto client = Client::create(options());
  client->close();
  auto refused = take(*client, {.ttl = 10s, .wait = 1s});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), errc::cancelled);
}

INSTANTIATE_TEST_SUITE_P(EveryKind, KindsContract,
                         ::testing::Values(Case{KindId::exclusive, false},
                                           Case{KindId::exclusive, true},
                                           Case{KindId::permit, false}, Case{KindId::permit, true},
                                           Case{KindId::reader, false}, Case{KindId::reader, true},
                                           Case{KindId::writer, false}, Case{KindId::writer, true},
                                           Case{KindId::key_set, false},
                                           Case{KindId::key_set, true}),
                         case_name);

}  // namespace
}  // namespace redlock::test

// Control over waits and holds against five real redis-server processes: cancelling a
// waiting lock() through a std::stop_token, failing fast when a quorum is unreachable,
// capping auto-extension, scoped work that is told to stop when its lock ends, and the
// asynchronous forms of every operation.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>

#include <redlock/redlock.hpp>

#include "support/lock_nodes_fixture.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

template <typename T>
T get_within(std::future<T>& future, std::chrono::milliseconds limit) {
  if (future.wait_for(limit) != std::future_status::ready) {
    throw std::runtime_error("no result within " + std::to_string(limit.count()) + " ms");
  }
  return future.get();
}

long long ms_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

class ControlTest : public test::LockNodesTest {
 protected:
  /// A client whose retry timer cannot find a release sooner than 4 s: a waiter gets a
  /// released lock sooner only through the release's wake.
  static std::shared_ptr<Client> slow_retry_client() { return Client::create(slow_polling()); }

  /// Takes "k" for 600 ms, extended every 200 ms under the limits in `limits`
  /// (max_hold, max_extensions), and waits for on_lost (at most 3 s).
  static std::pair<Lock, Error> hold_until_limit(Client& client, LockOptions limits) {
    auto lost = std::make_shared<std::promise<Error>>();
    auto lost_future = lost->get_future();
    limits.ttl = 600ms;
    limits.auto_extend = true;
    limits.extend_every = 200ms;
    limits.on_lost = [lost](const Error& e) { lost->set_value(e); };
    auto lock = client.lock("k", limits);
    if (!lock) throw std::runtime_error(lock.error().message());
    auto error = get_within(lost_future, 3s);
    return {std::move(*lock), std::move(error)};
  }

  /// Waits (up to 5 s) until every node has a subscriber on `channel`.
  static void wait_for_subscribers(const std::string& channel) {
    const auto deadline = Clock::now() + 5s;
    for (std::size_t node = 0; node < cluster().size(); ++node) {
      while (cluster()[node].command({"PUBSUB", "NUMSUB", channel}).elements.at(1).integer == 0) {
        if (Clock::now() > deadline) throw std::runtime_error("no subscriber on " + channel);
        std::this_thread::sleep_for(5ms);
      }
    }
  }

  /// Nodes where `key` is set.
  static int nodes_holding(const std::string& key) {
    int holding = 0;
    for (std::size_t node = 0; node < cluster().size(); ++node) {
      if (get(node, key) != "(nil)") ++holding;
    }
    return holding;
  }
};

// --- cancellation ---------------------------------------------------------------------

TEST_F(ControlTest, StopTokenEndsAWaitPromptlyAndTheNextWaiterStillGetsTheLock) {
  // The holder is a lock of the waiters' own client, so its release wakes the key's next
  // waiter at once, with the acquire written behind the release on every node: what is
  // tested is the queue, not the race of another client's announcement.
  auto client = slow_retry_client();
  // The scripts are loaded on every node first: a release whose EVALSHA meets NOSCRIPT is
  // resent as EVAL behind the woken waiter's acquire, which then still finds the key.
  auto warm_up = client->try_lock("warm-up", 1s);
  ASSERT_TRUE(warm_up);
  ASSERT_TRUE(warm_up->unlock());
  auto holder = client->lock("k", {.ttl = 30s});
  ASSERT_TRUE(holder) << holder.error().message();
  std::stop_source cancel;
  auto first = std::async(std::launch::async, [&] {
    return client->lock("k", {.ttl = 10s, .wait = 20s, .stop = cancel.get_token()});
  });
  // The first waiter is subscribed (then attempts at once) before the second comes.
  wait_for_subscribers("k:released");
  std::this_thread::sleep_for(100ms);
  auto second =
      std::async(std::launch::async, [&] { return client->lock("k", {.ttl = 10s, .wait = 20s}); });
  std::this_thread::sleep_for(200ms);

  const auto stopped_at = Clock::now();
  cancel.request_stop();
  auto cancelled = get_within(first, 2s);
  const auto cancel_ms = ms_since(stopped_at);
  ASSERT_FALSE(cancelled);
  EXPECT_EQ(cancelled.error(), errc::cancelled) << cancelled.error().message();
  EXPECT_NE(cancelled.error().message().find("stop token"), std::string::npos);
  EXPECT_LT(cancel_ms, 100) << "a cancelled waiter must return within a loop turn";
  std::printf("cancelled waiter returned %lld ms after request_stop\n", cancel_ms);

  // The cancelled waiter was first in the queue: if it had stayed there, the release's
  // wake would go to it, and the second waiter would sleep out its 5 s retry delay.
  const auto released_at = Clock::now();
  ASSERT_TRUE(holder->unlock());
  auto next = get_within(second, 3s);
  ASSERT_TRUE(next) << next.error().message();
  EXPECT_LT(ms_since(released_at), 1000) << "the next waiter was not woken by the release";
}

TEST_F(ControlTest, StopDuringAnAttemptReleasesWhatTheAttemptGot) {
  // Three nodes never answer, so the attempt stays on the wire for its 1 s node deadline
  // while the two others grant.
  auto opts = options(1000ms);
  auto client = Client::create(opts);
  ASSERT_TRUE(client->status("warm-up"));  // every connection is up
  for (std::size_t node = 2; node < 5; ++node) cluster()[node].pause();

  std::stop_source cancel;
  auto waiting = std::async(std::launch::async, [&] {
    return client->lock("k", {.ttl = 10s, .stop = cancel.get_token()});
  });
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(get(0, "k").size(), 32u) << "the attempt's grant is on node 0";
  const auto stopped_at = Clock::now();
  cancel.request_stop();
  auto cancelled = get_within(waiting, 2s);
  ASSERT_FALSE(cancelled);
  EXPECT_EQ(cancelled.error(), errc::cancelled);
  EXPECT_LT(ms_since(stopped_at), 100) << "cancel did not wait for the attempt";

  // Once the attempt's round ends (the paused nodes time out), its grants are deleted
  // instead of being left to expire with the 10 s ttl.
  const auto deadline = Clock::now() + 3s;
  while ((get(0, "k") != "(nil)" || get(1, "k") != "(nil)") && Clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_EQ(get(0, "k"), "(nil)");
  EXPECT_EQ(get(1, "k"), "(nil)");
}

TEST_F(ControlTest, StopRequestedBeforeTheCallMakesNoAttempt) {
  auto client = Client::create(options());
  std::stop_source cancel;
  cancel.request_stop();
  auto lock = client->lock("k", {.ttl = 10s, .wait = 5s, .stop = cancel.get_token()});
  ASSERT_FALSE(lock);
  EXPECT_EQ(lock.error(), errc::cancelled);
  std::promise<Result<Lock>> async_done;
  auto async_result = async_done.get_future();
  client->lock_async("k", {.ttl = 10s, .stop = cancel.get_token()},
                     [&](Result<Lock> r) { async_done.set_value(std::move(r)); });
  auto async_lock = get_within(async_result, 2s);
  ASSERT_FALSE(async_lock);
  EXPECT_EQ(async_lock.error(), errc::cancelled);
  EXPECT_EQ(nodes_holding("k"), 0);
}

TEST_F(ControlTest, StopTokenCancelsLockAsync) {
  auto holder = Client::create(options())->try_lock("k", 30s);
  ASSERT_TRUE(holder);
  auto client = slow_retry_client();
  std::stop_source cancel;
  std::promise<Result<Lock>> done;
  auto result = done.get_future();
  std::atomic<int> calls{0};
  client->lock_async("k", {.ttl = 10s, .wait = 20s, .stop = cancel.get_token()},
                     [&](Result<Lock> r) {
                       if (++calls == 1) done.set_value(std::move(r));
                     });
  std::this_thread::sleep_for(100ms);
  cancel.request_stop();
  auto lock = get_within(result, 1s);
  ASSERT_FALSE(lock);
  EXPECT_EQ(lock.error(), errc::cancelled);
  cancel.request_stop();
  client->close();
  EXPECT_EQ(calls, 1);
}

// --- fail fast ------------------------------------------------------------------------

TEST_F(ControlTest, FailFastReturnsAtTheFirstUnreachableQuorum) {
  for (std::size_t node = 0; node < 3; ++node) cluster()[node].kill9();
  auto client = Client::create(options());

  auto started = Clock::now();
  auto fast = client->lock("k", {.ttl = 10s, .wait = 10s, .fail_fast = true});
  const auto fast_ms = ms_since(started);
  ASSERT_FALSE(fast);
  EXPECT_EQ(fast.error(), errc::quorum_unreachable) << fast.error().message();
  EXPECT_LT(fast_ms, 2000);

  // Without it the same call keeps retrying until its wait ends.
  started = Clock::now();
  auto patient = client->lock("k", {.ttl = 10s, .wait = 600ms});
  ASSERT_FALSE(patient);
  EXPECT_EQ(patient.error(), errc::quorum_unreachable);
  EXPECT_GE(ms_since(started), 550);
  std::printf("fail_fast returned after %lld ms\n", fast_ms);
}

TEST_F(ControlTest, FailFastStillWaitsOutAConflict) {
  auto holder_client = Client::create(options());
  auto holder = holder_client->lock("k", {.ttl = 300ms});
  ASSERT_TRUE(holder);
  auto lock = Client::create(options())->lock("k", {.ttl = 10s, .wait = 5s, .fail_fast = true});
  EXPECT_TRUE(lock) << lock.error().message();
}

// --- bounded holding ------------------------------------------------------------------

TEST_F(ControlTest, MaxExtensionsEndsTheLockWithItsOwnReason) {
  auto client = Client::create(options());
  const auto started = Clock::now();
  auto [lock, error] = hold_until_limit(*client, {.max_extensions = 2});
  EXPECT_EQ(error, errc::hold_limit_reached) << error.message();
  EXPECT_NE(error.message().find("max_extensions"), std::string::npos) << error.message();
  EXPECT_GE(ms_since(started), 550) << "two extensions come before the limit";
  EXPECT_TRUE(lock.lost());
  EXPECT_EQ(lock.validity(), 0ms);
  // Not extended any more: the keys expire within a ttl.
  std::this_thread::sleep_for(700ms);
  EXPECT_EQ(nodes_holding("k"), 0);
}

TEST_F(ControlTest, MaxHoldNeverExtendsPastItsEnd) {
  auto client = Client::create(options());
  const auto started = Clock::now();
  auto [lock, error] = hold_until_limit(*client, {.max_hold = 1100ms});
  EXPECT_EQ(error, errc::hold_limit_reached) << error.message();
  EXPECT_NE(error.message().find("max_hold"), std::string::npos) << error.message();
  EXPECT_GE(ms_since(started), 550) << "extensions that end within max_hold are made";
  // The last extension (at ~400 ms) ends at ~1000 ms; one that ended after 1100 ms (the
  // tick at ~600 ms, were it allowed) would keep the keys past 1250 ms.
  while (ms_since(started) < 1250) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(nodes_holding("k"), 0);
}

TEST_F(ControlTest, NegativeLimitsAreRejected) {
  auto client = Client::create(options());
  auto lock = client->lock("k", {.ttl = 1s, .max_hold = -1ms});
  ASSERT_FALSE(lock);
  EXPECT_EQ(lock.error(), errc::invalid_argument);
  lock = client->lock("k", {.ttl = 1s, .max_extensions = -1});
  ASSERT_FALSE(lock);
  EXPECT_EQ(lock.error(), errc::invalid_argument);
}

// --- scoped work ----------------------------------------------------------------------

TEST_F(ControlTest, WithLockStopsTheWorkWhenTheHoldLimitIsReached) {
  auto client = Client::create(options());
  std::atomic<bool> user_on_lost{false};
  auto result = with_lock(*client, "k",
                          {.ttl = 600ms,
                           .auto_extend = true,
                           .extend_every = 200ms,
                           .on_lost = [&](const Error&) { user_on_lost = true; },
                           .max_extensions = 1},
                          [&](Lock& lock, std::stop_token stop) {
                            EXPECT_TRUE(lock.owned());
                            const auto deadline = Clock::now() + 5s;
                            while (!stop.stop_requested() && Clock::now() < deadline) {
                              std::this_thread::sleep_for(5ms);
                            }
                            EXPECT_GT(lock.valid_until(), Clock::now()) << "told to stop too late";
                            return stop.stop_requested() ? 42 : 0;
                          });
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_EQ(*result, 42);
  EXPECT_TRUE(user_on_lost);
  EXPECT_TRUE(gone_everywhere("k")) << "released at the end";
}

TEST_F(ControlTest, WithLockStopsTheWorkWhenTheLockIsLost) {
  auto client = Client::create(options());
  auto result = with_lock(*client, "k", {.ttl = 1s, .auto_extend = true, .extend_every = 200ms},
                          [&](std::stop_token stop) {
                            for (std::size_t node = 0; node < 3; ++node) cluster()[node].kill9();
                            const auto deadline = Clock::now() + 5s;
                            while (!stop.stop_requested() && Clock::now() < deadline) {
                              std::this_thread::sleep_for(5ms);
                            }
                            return stop.stop_requested();
                          });
  ASSERT_TRUE(result) << result.error().message();
  EXPECT_TRUE(*result) << "the stop token did not fire on the loss";
}

TEST_F(ControlTest, WithLockReleasesWhenTheWorkThrows) {
  auto client = Client::create(options());
  bool ran = false;
  EXPECT_THROW((void)with_lock(*client, "k", {.ttl = 30s},
                               [&](std::stop_token) {
                                 ran = true;
                                 EXPECT_GE(nodes_holding("k"), 3);
                                 throw std::runtime_error("work failed");
                               }),
               std::runtime_error);
  EXPECT_TRUE(ran);
  EXPECT_TRUE(gone_everywhere("k"));
  auto again = client->try_lock("k", 1s);
  EXPECT_TRUE(again) << again.error().message();
}

TEST_F(ControlTest, WithLockReturnsTheAcquisitionErrorWithoutRunningTheWork) {
  auto holder = Client::create(options())->try_lock("k", 30s);
  ASSERT_TRUE(holder);
  auto client = Client::create(options());
  bool ran = false;
  auto result = with_lock(*client, "k", {.ttl = 1s}, [&](std::stop_token) { ran = true; });
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error(), errc::conflict);
  EXPECT_FALSE(ran);
}

// --- the asynchronous forms -----------------------------------------------------------

/// Runs `start(callback)` and returns the callback's single argument, with the thread it
/// ran on.
template <typename T, typename Start>
std::pair<T, std::thread::id> await_callback(Start start) {
  std::promise<std::pair<T, std::thread::id>> promise;
  auto future = promise.get_future();
  std::atomic<int> calls{0};
  start([&](T result) {
    if (++calls == 1) promise.set_value({std::move(result), std::this_thread::get_id()});
  });
  auto outcome = get_within(future, 3s);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(calls, 1) << "the callback must run exactly once";
  return outcome;
}

TEST_F(ControlTest, AsyncFormsMatchTheSynchronousOnes) {
  auto client = Client::create(options());
  const auto caller = std::this_thread::get_id();

  auto [taken, taken_on] = await_callback<Result<Lock>>(
      [&](auto cb) { client->try_lock_async("k", 5s, std::move(cb)); });
  ASSERT_TRUE(taken) << taken.error().message();
  EXPECT_NE(taken_on, caller);
  const std::string value = taken->value();

  auto [conflict, conflict_on] = await_callback<Result<Lock>>(
      [&](auto cb) { client->try_lock_async("k", 5s, std::move(cb)); });
  ASSERT_FALSE(conflict);
  EXPECT_EQ(conflict.error(), errc::conflict);

  auto [status, status_on] = await_callback<Result<std::vector<NodeOutcome>>>(
      [&](auto cb) { client->status_async("k", std::move(cb)); });
  ASSERT_TRUE(status);
  ASSERT_EQ(status->size(), 5u);
  for (const auto& node : *status) EXPECT_EQ(node.holder, value) << describe(node);

  auto [extended, extended_on] = await_callback<Result<std::chrono::milliseconds>>(
      [&](auto cb) { client->extend_async("k", value, 20s, std::move(cb)); });
  ASSERT_TRUE(extended) << extended.error().message();
  EXPECT_GT(*extended, 10s);
  // The call returned at the quorum's decision; node 0 may answer a little later.
  long long left = 0;
  for (int tries = 0; tries < 1000 && left <= 10000; ++tries) {
    left = cluster()[0].command({"PTTL", "k"}).integer;
    if (left <= 10000) std::this_thread::sleep_for(1ms);
  }
  EXPECT_GT(left, 10000);

  const auto before = taken->valid_until();
  auto [lock_extended, lock_extended_on] = await_callback<Result<void>>(
      [&lock = taken](auto cb) { lock->extend_async(30s, std::move(cb)); });
  ASSERT_TRUE(lock_extended) << lock_extended.error().message();
  EXPECT_GT(taken->valid_until(), before + 20s);

  auto [wrong, wrong_on] = await_callback<Result<void>>(
      [&](auto cb) { client->release_async("k", "not-the-holder", std::move(cb)); });
  ASSERT_FALSE(wrong);
  EXPECT_EQ(wrong.error(), errc::not_held);

  auto [released, released_on] = await_callback<Result<void>>(
      [&](auto cb) { client->release_async("k", value, std::move(cb)); });
  ASSERT_TRUE(released) << released.error().message();
  EXPECT_NE(released_on, caller);
  EXPECT_TRUE(gone_everywhere("k"));
}

TEST_F(ControlTest, AsyncFormsReportBadArgumentsAndClosedClients) {
  auto client = Client::create(options());
  const auto caller = std::this_thread::get_id();
  auto [bad, bad_on] = await_callback<Result<std::chrono::milliseconds>>(
      [&](auto cb) { client->extend_async("k", "", 1s, std::move(cb)); });
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(), errc::invalid_argument);
  EXPECT_NE(bad_on, caller) << "bad arguments are reported on the loop thread";

  auto lock = client->try_lock("k", 5s);
  ASSERT_TRUE(lock);
  auto [bad_ttl, bad_ttl_on] =
      await_callback<Result<void>>([&](auto cb) { lock->extend_async(0ms, std::move(cb)); });
  ASSERT_FALSE(bad_ttl);
  EXPECT_EQ(bad_ttl.error(), errc::invalid_argument);
  ASSERT_TRUE(lock->unlock());

  client->close();
  auto [closed, closed_on] = await_callback<Result<std::vector<NodeOutcome>>>(
      [&](auto cb) { client->status_async("k", std::move(cb)); });
  ASSERT_FALSE(closed);
  EXPECT_EQ(closed.error(), errc::cancelled);
  EXPECT_EQ(closed_on, caller) << "after close the callback runs on the calling thread";
}

}  // namespace
}  // namespace redlock

// The exclusive lock at its edges: combinations of API calls (the watchdog with a manual
// extend, close() from two threads, unlock after a failed unlock), durations at their
// limits, callbacks that throw, and holders that never announce their release. Each test
// asserts what the headers promise, against five real nodes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <uv.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <thread>
#include <type_traits>
#include <vector>

#include <redlock/redlock.hpp>

#include "support/lock_nodes_fixture.hpp"
#include "support/must_finish.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;
using test::must_finish;

class LockEdgesTest : public test::LockNodesTest {
 protected:
  /// The longest time that a quorum (3 of 5) of the nodes still hold `value` for `key`:
  /// the third largest PTTL among the nodes where the key holds `value`.
  static std::chrono::milliseconds quorum_holds(const std::string& key, const std::string& value) {
    std::vector<long long> ttls;
    for (std::size_t i = 0; i < cluster().size(); ++i) {
      auto reply = cluster()[i].command(
          {"EVAL", "return {redis.call('GET', KEYS[1]) or '', redis.call('PTTL', KEYS[1])}", "1",
           key});
      if (reply.elements.size() == 2 && reply.elements[0].str == value) {
        ttls.push_back(reply.elements[1].integer);
      }
    }
    if (ttls.size() < 3) return 0ms;
    std::sort(ttls.rbegin(), ttls.rend());
    return std::chrono::milliseconds(ttls[2]);
  }

  /// Starts `work` on `thread`; the future is ready once it returned.
  template <typename Work>
  static std::future<void> run_on(std::thread& thread, Work work) {
    auto done = std::make_shared<std::promise<void>>();
    auto future = done->get_future();
    thread = std::thread([done, work = std::move(work)]() mutable {
      work();
      done->set_value();
    });
    return future;
  }
};

// The watchdog re-extends to the lock's TTL. After a manual extend to a longer TTL it must
// extend to that one (or the nodes drop the key while validity() still reports the long
// one): validity() may never exceed what a quorum of nodes holds.
// A Lock is made by the client alone: no public constructor takes the library's internals.
// An empty one holds nothing, as a moved-from one, and every call on it says so.
static_assert(!std::is_constructible_v<Lock, std::shared_ptr<detail::LockState>>);
static_assert(!std::is_constructible_v<Lock, std::nullptr_t>);
static_assert(std::is_nothrow_default_constructible_v<Lock>);
static_assert(!std::is_constructible_v<FencedStore, std::unique_ptr<detail::FencedStoreImpl>>);

TEST_F(LockEdgesTest, AnEmptyLockHoldsNothingAndTakesAMovedLock) {
  auto client = Client::create(options());
  Lock empty;
  EXPECT_FALSE(empty.owned());
  EXPECT_TRUE(empty.unlock()) << "nothing to release: done at once";
  auto extended = empty.extend(10s);
  ASSERT_FALSE(extended);
  EXPECT_EQ(extended.error().code(), errc::not_held);
  auto held = client->lock("edges:empty", {.ttl = 10s});
  ASSERT_TRUE(held) << held.error().message();
  empty = std::move(*held);
  EXPECT_TRUE(empty.owned());
  EXPECT_EQ(empty.resource(), "edges:empty");
  EXPECT_TRUE(empty.unlock());
}

TEST_F(LockEdgesTest, ManualExtendAndWatchdogAgreeOnOneTtl) {
  auto client = Client::create(options());
  auto lock = client->lock("edges:1", {.ttl = 600ms, .auto_extend = true});
  ASSERT_TRUE(lock) << lock.error().message();
  ASSERT_TRUE(lock->extend(5s));
  for (int i = 0; i < 4; ++i) {
    std::this_thread::sleep_for(250ms);  // across the watchdog's ticks (every 200 ms)
    const auto validity = lock->validity();
    const auto held = quorum_holds("edges:1", lock->value());
    EXPECT_LE(validity, held) << "after " << (i + 1) * 250 << " ms validity() is "
                              << validity.count() << " ms but a quorum holds the key only "
                              << held.count() << " ms";
  }
  // And the other way: a shorter manual extend is what the watchdog keeps extending to.
  ASSERT_TRUE(lock->extend(900ms));
  std::this_thread::sleep_for(700ms);
  EXPECT_LE(lock->validity(), quorum_holds("edges:1", lock->value()));
  EXPECT_LE(lock->validity(), 900ms) << "the watchdog went back to the longer ttl";
  EXPECT_GT(lock->validity(), 0ms);
  EXPECT_FALSE(lock->lost());
}

// close() is idempotent and callable from any thread, so two threads may call it at once;
// both must return. The first waits for a release still on the wire (a paused node does not
// answer it), which opens the window for the second.
TEST_F(LockEdgesTest, CloseFromTwoThreadsAtOnceReturnsInBoth) {
  auto client = Client::create(options(150ms));
  auto lock = client->try_lock("edges:2", 10s);
  ASSERT_TRUE(lock);
  cluster()[0].pause();
  lock->unlock_async([](Result<void>) {});
  std::thread first;
  std::thread second;
  auto first_future = run_on(first, [&] { client->close(); });
  auto second_future = run_on(second, [&] { client->close(); });
  must_finish(first_future, 5s, "the first close()");
  must_finish(second_future, 5s, "the second close()");
  first.join();
  second.join();
  auto after = client->try_lock("edges:2", 10s);
  ASSERT_FALSE(after);
  EXPECT_EQ(after.error(), errc::cancelled);
}

// Synchronous callers waiting on a held lock, some of whom may be running the loop
// themselves (SyncCalls::lead), all return cancelled when another thread closes the
// client, and close() returns: no waiter is left asleep and the loop ends. The same with
// every call handed off.
TEST_F(LockEdgesTest, CloseFromAnotherThreadEndsEverySynchronousWaiter) {
  for (const SyncCalls mode : {SyncCalls::lead, SyncCalls::hand_off}) {
    SCOPED_TRACE(mode == SyncCalls::lead ? "sync_calls lead" : "sync_calls hand_off");
    auto holder = Client::create(options());
    auto held = holder->try_lock("edges:close-waiters", 10s);
    ASSERT_TRUE(held) << held.error().message();
    auto waiting_options = options();
    waiting_options.sync_calls = mode;
    auto client = Client::create(waiting_options);
    constexpr int waiters = 8;
    std::atomic<int> cancelled{0};
    std::vector<std::thread> threads;
    std::promise<void> all_returned;
    std::atomic<int> returned{0};
    for (int i = 0; i < waiters; ++i) {
      threads.emplace_back([&] {
        auto lock = client->lock("edges:close-waiters", {.ttl = 10s, .wait = 10s});
        if (!lock && lock.error() == errc::cancelled) ++cancelled;
        if (++returned == waiters) all_returned.set_value();
      });
    }
    std::this_thread::sleep_for(300ms);  // every thread is waiting by now
    EXPECT_EQ(returned.load(), 0) << "a waiter returned before the lock was free";
    std::thread closer;
    auto closed_future = run_on(closer, [&] { client->close(); });
    auto returned_future = all_returned.get_future();
    must_finish(closed_future, 5s, "close()");
    must_finish(returned_future, 5s, "the waiting lock() calls");
    closer.join();
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(cancelled.load(), waiters);
    EXPECT_TRUE(held->unlock());
  }
}

// A close() on the loop thread right after unlock() in the same callback must still send
// the release, not cancel it before it was written.
TEST_F(LockEdgesTest, UnlockThenCloseInOneCallbackStillReleases) {
  auto client = Client::create(options());
  std::promise<std::string> value;
  std::promise<std::error_code> sync_unlock;
  client->lock_async("edges:3", {.ttl = 10s}, [&](Result<Lock> lock) {
    if (!lock) return value.set_value("");
    // A synchronous unlock() would wait for this very thread: refused, changing nothing,
    // like extend().
    sync_unlock.set_value(lock->unlock().code());
    value.set_value(lock->value());
    lock->unlock_async([](Result<void>) {});
    client->close();
  });
  EXPECT_EQ(sync_unlock.get_future().get(), make_error_code(errc::invalid_argument));
  auto future = value.get_future();
  ASSERT_EQ(future.wait_for(5s), std::future_status::ready);
  ASSERT_FALSE(future.get().empty());
  std::this_thread::sleep_for(200ms);
  for (std::size_t i = 0; i < cluster().size(); ++i) {
    EXPECT_EQ(get(i, "edges:3"), "(nil)") << "node " << i << " kept the released lock";
  }
}

// The watchdog must learn of a failed extension while validity is left, whatever
// extend_every says: a round on silent nodes takes a whole node_timeout.
TEST_F(LockEdgesTest, WatchdogReportsALossBeforeValidityEndsWithExtendEveryNearTtl) {
  auto client = Client::create(options());
  std::promise<Clock::time_point> lost_at;
  auto lock = client->lock(
      "edges:4",
      {.ttl = 1000ms, .auto_extend = true, .extend_every = 980ms, .on_lost = [&](const Error&) {
         lost_at.set_value(Clock::now());
       }});
  ASSERT_TRUE(lock) << lock.error().message();
  for (std::size_t i : {0u, 2u, 4u}) cluster()[i].pause();
  auto future = lost_at.get_future();
  ASSERT_EQ(future.wait_for(3s), std::future_status::ready) << "the loss went unnoticed";
  const auto when = future.get();
  EXPECT_LT(when, lock->valid_until())
      << "on_lost ran "
      << std::chrono::duration_cast<std::chrono::milliseconds>(when - lock->valid_until()).count()
      << " ms after the validity had ended";
  EXPECT_TRUE(lock->lost());
}

// Settings under which the watchdog cannot learn of a failed extension before validity
// ends are refused up front, naming the fields: with fencing an acquisition may take two
// rounds of 450 ms, which leaves a 1 s lock no time for a watchdog round.
TEST_F(LockEdgesTest, AutoExtendSettingsThatCannotReportALossInTimeAreRefused) {
  auto client = Client::create(options(450ms));
  auto lock = client->lock("edges:5", {.ttl = 1000ms, .fencing = true, .auto_extend = true});
  ASSERT_FALSE(lock);
  EXPECT_EQ(lock.error(), errc::invalid_argument);
  EXPECT_THAT(lock.error().message(), HasSubstr("node_timeout"));
  // Without the watchdog the same settings are fine: nobody promised a report.
  EXPECT_TRUE(client->lock("edges:5", {.ttl = 1000ms, .fencing = true}));
}

// A stalled loop thread must not let the watchdog extend a lock whose validity already
// ended (the value still sits on the nodes in the drift window): that would revive it.
TEST_F(LockEdgesTest, WatchdogNeverExtendsALockWhoseValidityEnded) {
  auto client_options = options();
  client_options.drift_factor = 0.3;  // validity 700 ms of a 1000 ms ttl
  auto client = Client::create(client_options);
  auto lock = client->lock("edges:6", {.ttl = 1000ms, .auto_extend = true});
  ASSERT_TRUE(lock);
  // Stall the loop thread (a callback that blocks) past the validity.
  std::promise<void> stalled;
  client->lock_async("edges:6-stall", {.ttl = 10s}, [&](Result<Lock>) {
    std::this_thread::sleep_for(850ms);
    stalled.set_value();
  });
  stalled.get_future().wait();
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(lock->validity(), 0ms) << "the watchdog revived an expired lock";
  for (std::size_t i = 0; i < cluster().size(); ++i) {
    auto ttl = cluster()[i].command({"PTTL", "edges:6"}).integer;
    EXPECT_LT(ttl, 300) << "node " << i << " was extended after the validity had ended";
  }
}

// unlock() that failed (no quorum confirmed) can be retried, and the retry is sent.
TEST_F(LockEdgesTest, UnlockAfterAFailedUnlockSendsTheReleaseAgain) {
  auto client = Client::create(options(100ms));
  auto lock = client->try_lock("edges:7", 10s);
  ASSERT_TRUE(lock);
  for (std::size_t i : {0u, 1u, 2u}) cluster()[i].pause();
  auto first = lock->unlock();
  ASSERT_FALSE(first);
  EXPECT_EQ(first.error(), errc::quorum_unreachable);
  // Retried while the nodes are still silent: the same truth, not a success that sent
  // nothing.
  auto retried = lock->unlock();
  ASSERT_FALSE(retried);
  EXPECT_EQ(retried.error(), errc::quorum_unreachable);
  EXPECT_FALSE(lock->owned()) << "given up by the caller, even if not yet released";
  EXPECT_EQ(lock->validity(), 0ms);
  for (std::size_t i : {0u, 1u, 2u}) cluster()[i].resume();
  std::this_thread::sleep_for(50ms);
  auto second = lock->unlock();
  EXPECT_TRUE(second) << second.error().message();
  for (std::size_t i = 0; i < cluster().size(); ++i) {
    EXPECT_EQ(get(i, "edges:7"), "(nil)") << "node " << i;
  }
  EXPECT_TRUE(lock->unlock()) << "a third unlock after a confirmed one is harmless";
}

// unlock_async() and then dropping the handle is the ordinary asynchronous use: the
// destructor must not send a second release of its own (nor wait for one) while the
// first is on its way.
TEST_F(LockEdgesTest, DroppingTheHandleAfterUnlockAsyncSendsOneRelease) {
  // A generous node timeout: a release that timed out on a loaded machine would be sent
  // again after the reconnect, which is not what this test counts.
  auto client = Client::create(options(1000ms));
  auto lock = client->try_lock("edges:async-release", 10s);
  ASSERT_TRUE(lock) << lock.error().message();
  const long long gets_before = calls({"get"});  // each release script GETs once per node
  std::promise<Result<void>> released;
  lock->unlock_async([&](Result<void> result) { released.set_value(std::move(result)); });
  { Lock dropped = std::move(*lock); }
  auto future = released.get_future();
  must_finish(future, 5s, "unlock_async");
  EXPECT_TRUE(future.get());
  // Decided at the third node; the other two, and a second release, land soon after.
  for (int tries = 0; tries < 100 && calls({"get"}) - gets_before < 5; ++tries) {
    std::this_thread::sleep_for(10ms);
  }
  std::this_thread::sleep_for(200ms);
  EXPECT_EQ(calls({"get"}) - gets_before, 5) << "one release per node, not two";
  for (std::size_t i = 0; i < cluster().size(); ++i) {
    EXPECT_EQ(get(i, "edges:async-release"), "(nil)") << "node " << i;
  }
}

// wait = max means "until acquired", not one attempt; a ttl too long for the clock is
// refused with a clear error.
TEST_F(LockEdgesTest, DurationsAtTheirLimits) {
  auto client = Client::create(options());
  // A holder that is never released: its key expires after 300 ms.
  for (std::size_t i = 0; i < cluster().size(); ++i) {
    cluster()[i].command({"SET", "edges:8", "gone-holder", "PX", "300"});
  }
  const auto start = Clock::now();
  auto lock = client->lock("edges:8", {.ttl = 10s, .wait = std::chrono::milliseconds::max()});
  EXPECT_TRUE(lock) << lock.error().message();
  EXPECT_GE(Clock::now() - start, 100ms);

  auto huge = client->lock("edges:9", {.ttl = std::chrono::milliseconds::max()});
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error(), errc::invalid_argument);
  EXPECT_THAT(huge.error().message(), HasSubstr("ttl"));
  ASSERT_TRUE(client->try_lock("edges:10", 10s));
  auto extended = client->lock("edges:11", {.ttl = 10s});
  ASSERT_TRUE(extended);
  auto too_long = extended->extend(std::chrono::milliseconds::max());
  ASSERT_FALSE(too_long);
  EXPECT_EQ(too_long.error(), errc::invalid_argument);
  EXPECT_GT(extended->validity(), 9s);
}

// on_lost without auto_extend would never be called: refused, not silently ignored.
TEST_F(LockEdgesTest, OnLostWithoutAutoExtendIsRefused) {
  auto client = Client::create(options());
  auto lock = client->lock("edges:12", {.ttl = 10s, .on_lost = [](const Error&) {}});
  ASSERT_FALSE(lock);
  EXPECT_EQ(lock.error(), errc::invalid_argument);
  EXPECT_THAT(lock.error().message(), HasSubstr("on_lost"));
}

// A callback that throws is reported and does not take the process down; the client keeps
// working and the lock the callback was given is released.
TEST_F(LockEdgesTest, AThrowingCallbackDoesNotEndTheProcess) {
  auto client = Client::create(options());
  std::promise<void> called;
  client->lock_async("edges:13", {.ttl = 10s}, [&](Result<Lock> lock) {
    called.set_value();
    if (lock) throw std::runtime_error("application bug");
  });
  called.get_future().wait();
  std::this_thread::sleep_for(100ms);
  auto again = client->try_lock("edges:13", 10s);
  EXPECT_TRUE(again) << "the thrown-away lock was not released: " << again.error().message();
}

// Every node timing out usually means node_timeout is below the round trip: say so.
TEST_F(LockEdgesTest, AllNodesTimingOutNamesTheNodeTimeout) {
  auto client = Client::create(options(60ms));
  for (std::size_t i = 0; i < cluster().size(); ++i) cluster()[i].pause();
  auto lock = client->try_lock("edges:14", 10s);
  ASSERT_FALSE(lock);
  EXPECT_EQ(lock.error(), errc::quorum_unreachable);
  EXPECT_THAT(lock.error().message(), HasSubstr("node_timeout"));
}

// A fenced write with token 0 (never issued: tokens start at 1) is refused.
TEST_F(LockEdgesTest, FencedWriteWithTokenZeroIsRefused) {
  auto store = FencedStore::create(storage().url());
  auto written = store->write("edges:15", 0, "edges:15:state", "x");
  ASSERT_FALSE(written);
  EXPECT_EQ(written.error(), errc::invalid_argument);
  EXPECT_TRUE(store->write("edges:15", 1, "edges:15:state", "x"));
}

// A holder that never announces its release (another Redlock library, a crashed process
// whose key was deleted by hand) must not make a waiter sleep until the holder's key could
// expire: the waiter re-checks at a bounded interval.
TEST_F(LockEdgesTest, AHolderThatNeverAnnouncesIsNoticedWithinTheRecheckInterval) {
  for (std::size_t i = 0; i < cluster().size(); ++i) {
    cluster()[i].command({"SET", "edges:16", "foreign-holder", "PX", "20000"});
  }
  auto client = Client::create(options());
  std::thread foreign_release([&] {
    std::this_thread::sleep_for(300ms);
    for (std::size_t i = 0; i < cluster().size(); ++i) cluster()[i].command({"DEL", "edges:16"});
  });
  const auto start = Clock::now();
  auto lock = client->lock("edges:16", {.ttl = 10s, .wait = 15s});
  const auto waited = Clock::now() - start;
  foreign_release.join();
  ASSERT_TRUE(lock) << lock.error().message();
  EXPECT_LT(waited, 2500ms) << "waited "
                            << std::chrono::duration_cast<std::chrono::milliseconds>(waited).count()
                            << " ms for a holder whose key was gone after 300 ms";
}

// A release that could not be written because the node's connection dropped is sent again
// once the node is back, instead of leaving our value there for the rest of its TTL. The
// node persists every write (AOF, fsync always), so the key survives its restart.
TEST_F(LockEdgesTest, AReleaseLostWithItsConnectionIsSentAgainAfterTheReconnect) {
  test::RedisServer durable({.appendonly_always = true});
  auto client_options = options(100ms);
  client_options.nodes[0] = durable.url();
  auto client = Client::create(client_options);
  auto lock = client->try_lock("edges:17", 30s);
  ASSERT_TRUE(lock) << lock.error().message();
  // The quorum may have been decided before the durable node (fsync on every write)
  // answered: wait until it holds the value.
  for (int i = 0; i < 100 && durable.command({"GET", "edges:17"}).str != lock->value(); ++i) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(durable.command({"GET", "edges:17"}).str, lock->value());
  durable.command({"SET", "edges:17:probe", "kept"});
  durable.kill9();
  EXPECT_TRUE(lock->unlock());  // four of five confirm; the fifth is down
  durable.restart();
  // The client may already have reconnected and released: a probe written the same way
  // shows that the restart kept what was written before the kill.
  ASSERT_EQ(durable.command({"GET", "edges:17:probe"}).str, "kept") << "the AOF lost writes";
  const auto deadline = Clock::now() + 3s;
  while (Clock::now() < deadline && !durable.command({"GET", "edges:17"}).is_nil()) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_TRUE(durable.command({"GET", "edges:17"}).is_nil())
      << "the restarted node still holds the released lock";
}

// --- The caller's loop (Options::loop) ------------------------------------------------
// The shutdown protocol of this mode: close() and ~Client never wait for the loop (it may
// not be running); they only begin the shutdown, which completes on the loop's next
// turns, after which uv_run returns by itself and the loop can be closed.

class CallersLoopTest : public LockEdgesTest {
 protected:
  void SetUp() override {
    LockEdgesTest::SetUp();
    ASSERT_EQ(uv_loop_init(&loop_), 0);
  }
  void TearDown() override {
    EXPECT_EQ(uv_loop_close(&loop_), 0) << "a handle of the client was left open";
    LockEdgesTest::TearDown();
  }
  Options loop_options() {
    auto result = options();
    result.loop = &loop_;
    return result;
  }
  uv_loop_t loop_{};
};

TEST_F(CallersLoopTest, CloseWhileTheLoopIsNotRunningReturnsAndTheLoopEndsLater) {
  auto client = Client::create(loop_options());
  std::promise<void> closed;
  std::thread closer([&] {
    client->close();
    client.reset();  // ~Client too
    closed.set_value();
  });
  auto future = closed.get_future();
  must_finish(future, 2s, "close() while the caller's loop was not running");
  closer.join();
  EXPECT_EQ(uv_run(&loop_, UV_RUN_DEFAULT), 0) << "the loop still had work after the shutdown";
}

TEST_F(CallersLoopTest, CloseAndDestroyFromALoopCallbackReturn) {
  auto client = Client::create(loop_options());
  std::error_code sync_on_loop;
  Lock held;
  client->lock_async("edges:20", {.ttl = 10s}, [&](Result<Lock> lock) {
    ASSERT_TRUE(lock) << lock.error().message();
    sync_on_loop = client->try_lock("edges:21", 10s).code();
    held = std::move(*lock);
    held.unlock_async(nullptr);
    client->close();
    client.reset();
  });
  EXPECT_EQ(uv_run(&loop_, UV_RUN_DEFAULT), 0);
  EXPECT_EQ(sync_on_loop, make_error_code(errc::invalid_argument));
  EXPECT_EQ(get(0, "edges:20"), "(nil)") << "the release in the closing callback was lost";
}

TEST_F(CallersLoopTest, SynchronousCallsFromOtherThreadsWhileTheLoopRuns) {
  auto client = Client::create(loop_options());
  std::thread runner([&] { uv_run(&loop_, UV_RUN_DEFAULT); });
  {
    auto lock = client->try_lock("edges:22", 10s);
    ASSERT_TRUE(lock) << lock.error().message();
    EXPECT_TRUE(lock->extend(20s));
    EXPECT_TRUE(lock->unlock());
  }
  client->close();
  runner.join();
}

}  // namespace
}  // namespace redlock

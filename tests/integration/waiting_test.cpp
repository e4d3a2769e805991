// Waiting on a held lock against five real redis-server processes: a release wakes one
// waiter of a client, not all of them, and a wake that its waiter cannot use goes to the
// next one instead of being lost.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <future>
#include <initializer_list>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "support/lock_nodes_fixture.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class WaitingTest : public test::LockNodesTest {
 protected:
  /// A client whose retry timer cannot find a release sooner than 4 s (and not before
  /// the holder's ttl ends once it saw one holder): only a wake gets it the lock sooner.
  static std::shared_ptr<Client> slow_retry_client(std::chrono::milliseconds drift_margin = 2ms) {
    auto slow = slow_polling();
    slow.drift_margin = drift_margin;
    return Client::create(slow);
  }

  /// Lua script calls (EVALSHA and EVAL: acquires, releases, extends).
  static long long script_calls() { return calls({"evalsha", "eval"}); }
};

TEST_F(WaitingTest, HotKeyWaitersOfOneClientDoNotAllRetryAtEachRelease) {
  // 32 threads of one client take turns on one key. When every waiter retried at each
  // release, a handoff cost an acquire attempt of 5 script calls per waiter (plus the
  // releases of partial grants); woken one at a time, a handoff costs the woken waiter's
  // attempt and the release (10), the thread that queues again waiting for its turn.
  constexpr int threads = 32;
  constexpr int cycles_per_thread = 15;
  constexpr long long cycles = threads * cycles_per_thread;
  auto client = Client::create(options());
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> failures{0};
  const long long calls_before = script_calls();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      for (int cycle = 0; cycle < cycles_per_thread; ++cycle) {
        auto lock = client->lock("hot", {.ttl = 10s, .wait = 60s});
        if (!lock) {
          ++failures;
          ADD_FAILURE() << lock.error().message();
          continue;
        }
        if (inside.fetch_add(1) != 0) ++overlaps;
        std::this_thread::sleep_for(100us);
        inside.fetch_sub(1);
        auto unlocked = lock->unlock();
        if (!unlocked) ADD_FAILURE() << unlocked.error().message();
      }
    });
  }
  for (auto& worker : workers) worker.join();
  const double per_cycle =
      static_cast<double>(script_calls() - calls_before) / static_cast<double>(cycles);
  std::printf("script calls per cycle at %d waiters: %.1f\n", threads, per_cycle);
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(overlaps, 0);
  // Generous: about 10 with one wake per release and no first attempt behind others
  // (15 with it); every waiter retrying made it ~150.
  EXPECT_LT(per_cycle, 60.0) << "more waiters attempt per release than the one woken";
}

TEST_F(WaitingTest, WokenWaiterThatCannotUseTheReleasePassesTheWakeOn) {
  // Two waiters of one client; the older one is woken first, but its lock's ttl is
  // shorter than the client's drift margin, so its attempt reaches a quorum with no
  // validity left — a failure that leaves no holder to announce the next release. The
  // wake must pass to the second waiter, whose own retry timer would only fire when the
  // old holder's 30 s ttl ends.
  auto holder_client = Client::create(options());
  auto waiter_client = slow_retry_client(100ms);
  auto holder = holder_client->try_lock("orders:31", 30s);
  ASSERT_TRUE(holder);

  auto first = std::async(std::launch::async, [&] {
    auto lock = waiter_client->lock("orders:31", {.ttl = 60ms, .wait = 3s});
    return lock ? std::string("acquired") : lock.error().message();
  });
  std::this_thread::sleep_for(300ms);  // the first waiter's first attempt has failed
  auto second = std::async(std::launch::async, [&] {
    auto lock = waiter_client->lock("orders:31", {.ttl = 10s, .wait = 20s});
    return std::make_pair(std::move(lock), Clock::now());
  });
  std::this_thread::sleep_for(300ms);
  const auto released_at = Clock::now();
  ASSERT_TRUE(holder->unlock());

  ASSERT_EQ(second.wait_for(10s), std::future_status::ready) << "the wake was lost";
  // Kept until the first waiter gives up: it then loses to a holder, not to a free key.
  auto [lock, acquired_at] = second.get();
  ASSERT_TRUE(lock) << lock.error().message();
  const auto handoff =
      std::chrono::duration_cast<std::chrono::milliseconds>(acquired_at - released_at);
  std::printf("second waiter acquired %lld ms after the release\n",
              static_cast<long long>(handoff.count()));
  EXPECT_LT(handoff, 4s) << "the second waiter waited for its retry timer";
  // Its failed attempts release what they set, and those releases announce too: a first
  // waiter that kept the wake would be woken by its own releases again and again, while
  // the second one slept.
  const std::string first_error = first.get();
  const auto at = first_error.find("(after ");
  ASSERT_NE(at, std::string::npos) << first_error;
  const int attempts = std::stoi(first_error.substr(at + 7));
  std::printf("first waiter: %s\n", first_error.c_str());
  EXPECT_LE(attempts, 10) << "the first waiter kept the wake to itself";
}

TEST_F(WaitingTest, WaiterThatGivesUpDoesNotStrandTheOthers) {
  // Three waiters of one client behind a holder of another; the oldest gives up (its wait
  // ends) before the release. The other two still get the lock one after the other,
  // each woken by the release before it, long before their 30 s fallback.
  auto holder_client = Client::create(options());
  auto waiter_client = slow_retry_client();
  auto holder = holder_client->try_lock("orders:32", 30s);
  ASSERT_TRUE(holder);

  auto impatient = std::async(std::launch::async, [&] {
    return waiter_client->lock("orders:32", {.ttl = 10s, .wait = 400ms}).code();
  });
  std::this_thread::sleep_for(100ms);
  std::vector<std::future<std::error_code>> patient;
  for (int i = 0; i < 2; ++i) {
    patient.push_back(std::async(std::launch::async, [&] {
      auto lock = waiter_client->lock("orders:32", {.ttl = 10s, .wait = 20s});
      if (!lock) return lock.code();
      std::this_thread::sleep_for(50ms);
      return lock->unlock().code();
    }));
  }
  EXPECT_EQ(impatient.get(), errc::conflict);
  ASSERT_TRUE(holder->unlock());
  for (auto& waiter : patient) {
    ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready) << "a waiter was stranded";
    EXPECT_EQ(waiter.get(), std::error_code());
  }
}

// The first node to apply a holder's release announces it; the waiter woken by that can
// reach the other nodes before the release does and be refused by the holder it knows is
// leaving. The other nodes' announcements carry the same value and wake no one again, so
// the waiter must not then sleep until its re-check (2.5 s here) or the holder's TTL.
// Here the announcement comes first by hand and the holder's key goes 200 ms later,
// silently.
TEST_F(WaitingTest, AWaiterRefusedByAHolderAlreadyAnnouncedAsReleasedRetriesSoon) {
  auto client = slow_retry_client();
  for (std::size_t i = 0; i < cluster().size(); ++i) {
    cluster()[i].command({"SET", "leaving", "holder-1", "PX", "30000"});
  }
  auto waiter = std::async(std::launch::async, [&] {
    auto lock = client->lock("leaving", {.ttl = 10s, .wait = 20s});
    return std::make_pair(lock.code(), Clock::now());
  });
  std::this_thread::sleep_for(300ms);  // refused once, asleep on the holder's TTL
  for (std::size_t i = 0; i < cluster().size(); ++i) {
    cluster()[i].command({"PUBLISH", "leaving:released", "holder-1"});
  }
  std::this_thread::sleep_for(200ms);  // woken, refused again by the leaving holder
  const auto released = Clock::now();
  for (std::size_t i = 0; i < cluster().size(); ++i) cluster()[i].command({"DEL", "leaving"});
  ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready);
  auto [code, at] = waiter.get();
  EXPECT_EQ(code, std::error_code());
  // Retries come within jittered, doubling spans of two node timeouts (well under a
  // second here); without them the re-check comes 2.3 s after the key went at the earliest.
  EXPECT_LT(at - released, 2s)
      << "acquired " << std::chrono::duration_cast<std::chrono::milliseconds>(at - released).count()
      << " ms after the key went";
}

// Another client's failed attempts that keep their entries until they expire (npm
// `redlock` does) leave the key split: held on some nodes by values none of which has a
// quorum, so nobody can acquire until enough of those entries go. A waiter refused by such
// a split tries again once they leave a quorum free (the moment they do, or at its next
// backed-off split retry), never before, and not after its retry delay (5 s here, give or
// take 1 s).
TEST_F(WaitingTest, AWaiterInASplitVoteTriesAgainWhenTheEntriesLeaveAQuorumFree) {
  auto client = slow_retry_client();
  // Three contenders' leftovers: one more node must free up, the soonest at ~400 ms
  // (counted from before it was set, so a slow machine cannot make it look early).
  const auto start = Clock::now();
  cluster()[0].command({"SET", "split", "contender-1", "PX", "400"});
  cluster()[1].command({"SET", "split", "contender-2", "PX", "20000"});
  cluster()[2].command({"SET", "split", "contender-3", "PX", "20000"});
  auto lock = client->lock("split", {.ttl = 10s, .wait = 20s});
  const auto took = Clock::now() - start;
  ASSERT_TRUE(lock) << lock.error().message();
  EXPECT_EQ(get(0, "split"), lock->value()) << "the freed node is ours";
  EXPECT_GE(took, 390ms) << "tried again before the entry could have expired";
  EXPECT_LT(took, 3s) << "acquired "
                      << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
                      << " ms after the first attempt: it slept its retry delay";
}

// Clients woken by one announcement split the nodes between them when they collide; each
// deletes what it got, unannounced. The head waiter of a split vote retries within a few
// milliseconds, backing off while the split lasts, not after its retry delay (5 s here,
// give or take 1 s): here the contenders' entries go 300 ms after the first attempt.
TEST_F(WaitingTest, AWaiterInASplitVoteThatClearsSilentlyRetriesSoon) {
  auto client = slow_retry_client();
  cluster()[0].command({"SET", "collide", "contender-1", "PX", "20000"});
  cluster()[1].command({"SET", "collide", "contender-1", "PX", "20000"});
  cluster()[2].command({"SET", "collide", "contender-2", "PX", "20000"});
  auto waiter = std::async(std::launch::async, [&] {
    auto lock = client->lock("collide", {.ttl = 10s, .wait = 20s});
    return std::make_pair(lock.code(), Clock::now());
  });
  std::this_thread::sleep_for(300ms);  // refused by the split, retrying while it lasts
  const auto cleared = Clock::now();
  for (std::size_t i : {0u, 1u, 2u}) cluster()[i].command({"DEL", "collide"});
  ASSERT_EQ(waiter.wait_for(10s), std::future_status::ready);
  auto [code, at] = waiter.get();
  EXPECT_EQ(code, std::error_code());
  // Backing off from a few ms, the retries are at most a few hundred ms apart by 300 ms.
  EXPECT_LT(at - cleared, 2s)
      << "acquired " << std::chrono::duration_cast<std::chrono::milliseconds>(at - cleared).count()
      << " ms after the split cleared: it slept its retry delay";
}

TEST_F(WaitingTest, OnlyAHoldersReleaseIsAnnounced) {
  // A foreign holder on three nodes: the attempt is granted on the other two, fails, and
  // releases those grants. Announcing that would wake waiters for a key still held (and,
  // after a split vote, every client's waiter at once); a holder's unlock announces on
  // every node.
  auto client = Client::create(options());
  for (std::size_t i : {0u, 1u, 2u}) {
    cluster()[i].command({"SET", "announce", "foreign", "PX", "30000"});
  }
  const long long before = calls({"publish"});
  auto refused = client->try_lock("announce", 10s);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), errc::conflict);
  client->close();  // waits for the leftover releases on the wire
  for (std::size_t i : {3u, 4u}) EXPECT_TRUE(cluster()[i].command({"GET", "announce"}).is_nil());
  EXPECT_EQ(calls({"publish"}) - before, 0);

  for (std::size_t i : {0u, 1u, 2u}) cluster()[i].command({"DEL", "announce"});
  auto holder = Client::create(options());
  auto lock = holder->try_lock("announce", 10s);
  ASSERT_TRUE(lock) << lock.error().message();
  ASSERT_TRUE(lock->unlock());
  // unlock() returns at a quorum and close() at the releases on the wire: the last node
  // may run its release a moment after close() returned.
  holder->close();
  const auto until = Clock::now() + 2s;
  while (calls({"publish"}) - before < 5 && Clock::now() < until) {
    std::this_thread::sleep_for(5ms);
  }
  EXPECT_EQ(calls({"publish"}) - before, 5);
}

}  // namespace
}  // namespace redlock

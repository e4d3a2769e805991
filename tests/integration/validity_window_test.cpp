// Validity against five real nodes where it matters: replies that take long (the fault
// proxy delays them), and the drift window, where the local validity is over while the
// value still sits on the nodes. Against local nodes a round lasts well under a
// millisecond, so without these a validity counted from the wrong instant, or an extend
// sent after the validity ended, passes every other test.

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "proxy/fault_proxy.hpp"
#include "support/lock_nodes_fixture.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

class ValidityWindowTest : public test::LockNodesTest {
 protected:
  /// PTTL of `key` on every lock node (-2 where it is missing).
  static std::vector<long long> pttls(const std::string& key) {
    std::vector<long long> ttls;
    for (std::size_t i = 0; i < cluster().size(); ++i) {
      ttls.push_back(cluster()[i].command({"PTTL", key}).integer);
    }
    return ttls;
  }

  /// The drift allowance the client subtracts for `ttl` (core/validity.hpp), rounded up.
  static milliseconds drift(milliseconds ttl, const Options& options) {
    return std::chrono::ceil<milliseconds>(ttl * options.drift_factor) + options.drift_margin;
  }
};

TEST_F(ValidityWindowTest, ValidityCountsFromTheRoundsStartWhenRepliesAreSlow) {
  // Every reply of the five nodes takes 200 ms more. The acquire's round therefore ends
  // at least 200 ms after it started, and that time is spent from the ttl: validity at
  // hand-over is at most ttl - 200 ms - drift. Counted from the round's end it would be
  // ttl - drift minus a few milliseconds.
  constexpr auto delay = 200ms;
  constexpr auto ttl = 3000ms;
  std::vector<std::unique_ptr<chaos::FaultProxy>> proxies;
  auto options = LockNodesTest::options(1000ms);
  options.nodes.clear();
  for (std::size_t i = 0; i < cluster().size(); ++i) {
    proxies.push_back(std::make_unique<chaos::FaultProxy>("127.0.0.1", cluster()[i].port()));
    options.nodes.push_back("redis://127.0.0.1:" + std::to_string(proxies.back()->port()));
  }
  auto client = Client::create(options);
  // Connections made and scripts loaded without delay, so the measured round is one round
  // trip per node (a NOSCRIPT resend would add a second one).
  {
    auto warm_up = client->try_lock("warm-up", ttl);
    ASSERT_TRUE(warm_up) << warm_up.error().message();
    ASSERT_TRUE(warm_up->extend(ttl)) << "extend loads its script";
    ASSERT_TRUE(warm_up->unlock());
  }
  for (auto& proxy : proxies) proxy->set_latency(chaos::Direction::down, delay);

  const auto bound = ttl - delay - drift(ttl, options);
  const auto before = Clock::now();
  auto lock = client->try_lock("slow-replies", ttl);
  ASSERT_TRUE(lock) << lock.error().message();
  const auto validity = lock->validity();
  const auto round = std::chrono::duration_cast<milliseconds>(Clock::now() - before);
  ASSERT_GE(round, delay) << "the proxies did not delay the replies";
  EXPECT_GT(validity, 0ms);
  EXPECT_LE(validity, bound) << "validity " << validity.count() << " ms after a round of "
                             << round.count() << " ms: not counted from the round's start";

  // Lock::extend measures from its round's start in the same way.
  ASSERT_TRUE(lock->extend(ttl));
  EXPECT_GT(lock->validity(), 0ms);
  EXPECT_LE(lock->validity(), bound);

  for (auto& proxy : proxies) proxy->set_latency(chaos::Direction::down, 0ms);
  EXPECT_TRUE(lock->unlock());
}

TEST_F(ValidityWindowTest, ExtendIsRefusedOnceValidityEndedThoughTheNodesStillHoldTheKey) {
  // With drift_factor 0.3 a 1 s lock is valid for about 700 ms, while the nodes keep the
  // value for the whole second. In between (the drift window) the caller must not act as
  // the owner any more, and extend() must not make the nodes hold the key again: another
  // client may already be entitled to it.
  constexpr auto ttl = 1000ms;
  auto options = LockNodesTest::options();
  options.drift_factor = 0.3;
  auto client = Client::create(options);
  auto lock = client->try_lock("drift-window", ttl);
  ASSERT_TRUE(lock) << lock.error().message();
  ASSERT_LE(lock->validity(), ttl - drift(ttl, options));

  const auto deadline = Clock::now() + ttl;
  while (lock->validity() > 0ms && Clock::now() < deadline) std::this_thread::sleep_for(5ms);
  ASSERT_EQ(lock->validity(), 0ms);
  const auto before = pttls("drift-window");
  for (std::size_t i = 0; i < before.size(); ++i) {
    ASSERT_GT(before[i], 50) << "node " << i << ": the key should still be in its drift window";
  }

  const auto extended = lock->extend(ttl);
  const auto after = pttls("drift-window");
  for (std::size_t i = 0; i < after.size(); ++i) {
    EXPECT_LE(after[i], before[i]) << "node " << i << ": extend() reached the node";
  }
  EXPECT_FALSE(extended) << "an expired lock was extended";
  if (!extended) {
    EXPECT_EQ(extended.error(), errc::not_held) << extended.error().message();
  }
  EXPECT_EQ(lock->validity(), 0ms);
}

TEST_F(ValidityWindowTest, AFailedAttemptWhoseValueMayHoldAQuorumAnnouncesItsRelease) {
  // Client A's attempt reaches all five nodes at once, but their replies come 1 s late,
  // so A gives up after its 300 ms node_timeout while its value holds every node. B,
  // which tried in between, saw A as the holder of a 10 s lock and waits. A's clean-up
  // must tell B: unannounced, B sleeps until its re-check (retry_delay 3 s: 1.5 s at the
  // earliest) or, without re-checks, until A's key expires.
  std::vector<std::unique_ptr<chaos::FaultProxy>> proxies;
  auto slow_options = LockNodesTest::options(300ms);
  slow_options.nodes.clear();
  for (std::size_t i = 0; i < cluster().size(); ++i) {
    proxies.push_back(std::make_unique<chaos::FaultProxy>("127.0.0.1", cluster()[i].port()));
    slow_options.nodes.push_back("redis://127.0.0.1:" + std::to_string(proxies.back()->port()));
  }
  auto slow = Client::create(slow_options);
  {
    auto warm_up = slow->try_lock("warm-up", 1s);
    ASSERT_TRUE(warm_up) << warm_up.error().message();
    ASSERT_TRUE(warm_up->unlock());
  }
  auto waiter_options = LockNodesTest::options(300ms);
  waiter_options.retry_delay = 3000ms;
  auto waiter = Client::create(waiter_options);
  for (auto& proxy : proxies) proxy->set_latency(chaos::Direction::down, 1000ms);

  const auto start = Clock::now();
  auto attempt = std::async(std::launch::async, [&] { return slow->try_lock("leftover", 10s); });
  // Until A's value is on a quorum, B would simply take the key.
  const auto deadline = start + 1s;
  auto holders = [&] {
    int n = 0;
    for (std::size_t i = 0; i < cluster().size(); ++i) {
      if (!cluster()[i].command({"GET", "leftover"}).is_nil()) ++n;
    }
    return n;
  };
  while (holders() < 3 && Clock::now() < deadline) std::this_thread::sleep_for(1ms);
  ASSERT_GE(holders(), 3) << "A's attempt did not reach the nodes";
  auto lock = waiter->lock("leftover", {.ttl = 2s, .wait = 5s});
  const auto waited = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  auto failed = attempt.get();
  for (auto& proxy : proxies) proxy->set_latency(chaos::Direction::down, 0ms);
  ASSERT_FALSE(failed) << "A's attempt should have timed out";
  ASSERT_TRUE(lock) << lock.error().message();
  EXPECT_LT(waited, 1200ms) << "B waited " << waited.count()
                            << " ms for a key A released after about 300 ms";
  EXPECT_TRUE(lock->unlock());
}

}  // namespace
}  // namespace redlock

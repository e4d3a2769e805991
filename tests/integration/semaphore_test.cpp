// The counting semaphore against five real redis-server processes: at most K holders,
// each expiring on its own, owner-checked extend and release touching only the caller's
// entry, waiting woken by a release, keys of another kind reported as such, and the
// quorum bound shown necessary by lowering it through the acquire's injected quorum.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

#include <redlock/redlock.hpp>

#include "client/calls/sync_call.hpp"
#include "client/engine/engine.hpp"
#include "client/kinds/kind.hpp"
#include "client/operations/acquire.hpp"
#include "support/lock_nodes_fixture.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

class SemaphoreTest : public test::LockNodesTest {
 protected:
  /// The holders of semaphore `key` on lock node `node` (live or not yet pruned).
  static long long holders(std::size_t node, const std::string& key) {
    return cluster()[node].command({"ZCARD", key}).integer;
  }
  /// The expiry (node ms) of holder `value` on node `node`, or -1.
  static long long expiry(std::size_t node, const std::string& key, const std::string& value) {
    auto reply = cluster()[node].command({"ZSCORE", key, value});
    return reply.is_nil() ? -1 : std::stoll(reply.str);
  }
  /// An extend or release returns once a quorum answered; the last node's answer is a
  /// moment behind.
  static void settle() { std::this_thread::sleep_for(50ms); }

  /// Counts a client's refused attempts: a test that must act while a waiter sleeps waits
  /// for its first refusal, not for a time a loaded machine may outlast.
  struct Refusals final : Observer {
    std::atomic<int> count{0};
    void on_attempt(const AttemptEvent& event) override {
      if (event.outcome == AttemptOutcome::conflict) ++count;
    }
  };
  static Options observed_by(Options options, const std::shared_ptr<Refusals>& refusals) {
    options.observer = refusals;
    return options;
  }
  static SemaphoreOptions permits(int k, std::chrono::milliseconds ttl = 10s) {
    return {.permits = k, .lock = {.ttl = ttl}};
  }
};

TEST_F(SemaphoreTest, AdmitsKHoldersAndRefusesTheNext) {
  auto client = Client::create(options());
  ASSERT_EQ(client->semaphore_quorum(3).value(), 4);
  std::vector<Lock> held;
  for (int i = 0; i < 3; ++i) {
    auto permit = client->acquire_permit("pool", permits(3));
    ASSERT_TRUE(permit) << permit.error().message();
    EXPECT_FALSE(permit->fencing_token());
    EXPECT_GT(permit->validity(), 9s);
    held.push_back(std::move(*permit));
  }
  settle();
  for (std::size_t node = 0; node < 5; ++node) EXPECT_EQ(holders(node, "pool"), 3);
  auto fourth = client->acquire_permit("pool", permits(3));
  ASSERT_FALSE(fourth);
  EXPECT_EQ(fourth.error(), errc::conflict);
  EXPECT_THAT(fourth.error().message(), HasSubstr("semaphore \"pool\" (3 permits)"));
  EXPECT_THAT(fourth.error().message(), HasSubstr("0 of 5 nodes granted (quorum 4)"));
  EXPECT_THAT(fourth.error().message(), HasSubstr("3 live holders"));
  // The refused attempt left nothing behind.
  for (std::size_t node = 0; node < 5; ++node) EXPECT_EQ(holders(node, "pool"), 3);

  ASSERT_TRUE(held[1].unlock());
  settle();
  for (std::size_t node = 0; node < 5; ++node) {
    EXPECT_EQ(holders(node, "pool"), 2);
    EXPECT_EQ(expiry(node, "pool", held[1].value()), -1);
    EXPECT_NE(expiry(node, "pool", held[0].value()), -1) << "a release touched another holder";
  }
  EXPECT_TRUE(client->acquire_permit("pool", permits(3)));
}

TEST_F(SemaphoreTest, EachHolderExpiresOnItsOwnAndIsNeverRevived) {
  auto client = Client::create(options());
  auto short_lived = client->acquire_permit("pool", permits(2, 300ms));
  auto long_lived = client->acquire_permit("pool", permits(2, 20s));
  ASSERT_TRUE(short_lived && long_lived);
  EXPECT_EQ(client->acquire_permit("pool", permits(2)).code(), make_error_code(errc::conflict));
  std::this_thread::sleep_for(400ms);
  // The short holder's permit is free again while the long one still holds its own.
  auto third = client->acquire_permit("pool", permits(2));
  ASSERT_TRUE(third) << third.error().message();
  for (std::size_t node = 0; node < 5; ++node) {
    EXPECT_EQ(expiry(node, "pool", short_lived->value()), -1) << "expired holder not pruned";
    EXPECT_NE(expiry(node, "pool", long_lived->value()), -1);
  }
}

TEST_F(SemaphoreTest, AnExpiredHoldersExtendIsRefusedByEveryNodeAndRevivesNothing) {
  // Lock::extend() refuses locally once the validity is over; the round is sent here
  // directly so that the nodes' own check is what is tested.
  // A long-lived holder keeps the set alive, so the expired member would still be found
  // there if the scripts did not prune by the node's clock first.
  auto client = Client::create(options());
  auto long_lived = client->acquire_permit("pool", permits(2, 20s));
  ASSERT_TRUE(long_lived);
  auto engine = detail::Engine::create(options());
  auto state = detail::call_sync<std::shared_ptr<detail::LockState>>(
      *engine, "acquire", [engine](auto deliver) {
        detail::start_acquire(engine, detail::Kind::permit("pool", 2, 3), {.ttl = 200ms},
                              std::move(deliver));
      });
  ASSERT_TRUE(state) << state.error().message();
  std::this_thread::sleep_for(300ms);
  auto extended = detail::call_sync<Clock::time_point>(
      *engine, "extend",
      [state = *state](auto deliver) { detail::start_extend(*state, 10s, std::move(deliver)); });
  ASSERT_FALSE(extended);
  EXPECT_EQ(extended.error(), errc::not_held);
  settle();  // the round was decided by three refusals; the last two nodes answer too
  for (std::size_t node = 0; node < 5; ++node) {
    EXPECT_EQ(expiry(node, "pool", (*state)->value), -1) << "revived on node " << node;
  }
  (*state)->release = detail::ReleaseState::confirmed;
  engine->close();
}

TEST_F(SemaphoreTest, ExtendMovesOnlyTheCallersExpiry) {
  auto client = Client::create(options());
  auto first = client->acquire_permit("pool", permits(2, 5s));
  auto second = client->acquire_permit("pool", permits(2, 5s));
  ASSERT_TRUE(first && second);
  settle();
  std::vector<long long> before;
  for (std::size_t node = 0; node < 5; ++node)
    before.push_back(expiry(node, "pool", second->value()));
  ASSERT_TRUE(first->extend(60s));
  EXPECT_GT(first->validity(), 55s);
  settle();
  for (std::size_t node = 0; node < 5; ++node) {
    EXPECT_GT(expiry(node, "pool", first->value()), before[node] + 50'000);
    EXPECT_EQ(expiry(node, "pool", second->value()), before[node]) << "extended another holder";
    // The set lives as long as its longest holder.
    EXPECT_GT(cluster()[node].command({"PTTL", "pool"}).integer, 55'000);
  }
}

TEST_F(SemaphoreTest, WatchdogKeepsAPermitBeyondItsTtl) {
  auto client = Client::create(options());
  auto permit = client->acquire_permit(
      "pool", {.permits = 1, .lock = {.ttl = 300ms, .auto_extend = true, .extend_every = 100ms}});
  ASSERT_TRUE(permit);
  std::this_thread::sleep_for(700ms);
  EXPECT_FALSE(permit->lost());
  EXPECT_GT(permit->validity(), 0ms);
  EXPECT_EQ(client->acquire_permit("pool", permits(1)).code(), make_error_code(errc::conflict));
}

TEST_F(SemaphoreTest, WaiterIsWokenByAReleaseNotPolling) {
  auto holder_client = Client::create(options());
  auto refusals = std::make_shared<Refusals>();
  auto waiter_client = Client::create(observed_by(slow_polling(), refusals));
  auto first = holder_client->acquire_permit("pool", permits(2, 30s));
  auto second = holder_client->acquire_permit("pool", permits(2, 30s));
  ASSERT_TRUE(first && second);
  auto waiter = std::async(std::launch::async, [&] {
    auto permit =
        waiter_client->acquire_permit("pool", {.permits = 2, .lock = {.ttl = 10s, .wait = 20s}});
    return std::make_pair(permit.code(), Clock::now());
  });
  // Released while the waiter sleeps after its refusal: a release before its first
  // attempt would test nothing.
  ASSERT_TRUE(eventually([&] { return refusals->count > 0; }, 10s));
  const auto released_at = Clock::now();
  ASSERT_TRUE(first->unlock());
  auto [code, acquired_at] = waiter.get();
  ASSERT_EQ(code, std::error_code());
  const auto handoff =
      std::chrono::duration_cast<std::chrono::milliseconds>(acquired_at - released_at);
  std::printf("semaphore handoff after release: %lld ms\n",
              static_cast<long long>(handoff.count()));
  EXPECT_LT(handoff, 3s) << "the waiter polled instead of being notified";
}

// A permit freed without an announcement (its holder's entry deleted by hand, or expired)
// while a waiter of the client sleeps: a newcomer's first attempt takes it. Queued behind
// the sleeping waiter, as an exclusive lock's newcomer is, it would wait for that
// waiter's next look (seconds at this retry_delay) for a permit free now.
TEST_F(SemaphoreTest, ANewcomerTakesAFreedPermitWithoutQueueingBehindWaiters) {
  auto holder_client = Client::create(options());
  auto refusals = std::make_shared<Refusals>();
  auto waiting_client = Client::create(observed_by(slow_polling(), refusals));
  auto held = holder_client->acquire_permit("pool", permits(1, 30s));
  ASSERT_TRUE(held) << held.error().message();
  const SemaphoreOptions waiting{.permits = 1, .lock = {.ttl = 10s, .wait = 20s}};
  auto waiter = std::async(std::launch::async,
                           [&] { return waiting_client->acquire_permit("pool", waiting); });
  // The permit is freed only once the waiter sleeps: a waiter whose first attempt came
  // after it (a loaded machine, a slow start) would take it and leave the newcomer
  // waiting for it.
  ASSERT_TRUE(eventually([&] { return refusals->count > 0; }, 10s));
  for (std::size_t node = 0; node < 5; ++node) {
    ASSERT_EQ(cluster()[node].command({"ZREM", "pool", held->value()}).integer, 1);
  }
  const auto asked = Clock::now();
  auto newcomer = waiting_client->acquire_permit("pool", waiting);
  const auto took = Clock::now() - asked;
  ASSERT_TRUE(newcomer) << newcomer.error().message();
  EXPECT_LT(took, 1s) << "the newcomer waited behind the sleeping waiter for a free permit";
  ASSERT_TRUE(newcomer->unlock());
  auto first = waiter.get();
  ASSERT_TRUE(first) << first.error().message();
}

TEST_F(SemaphoreTest, AKeyOfAnotherKindIsAClearErrorNotAnUnreachableQuorum) {
  auto client = Client::create(options());
  auto lock = client->try_lock("shared-name", 10s);
  ASSERT_TRUE(lock);
  auto permit = client->acquire_permit("shared-name", permits(2));
  ASSERT_FALSE(permit);
  EXPECT_EQ(permit.error(), errc::wrong_kind);
  EXPECT_THAT(permit.error().message(), HasSubstr("the key is an exclusive lock"));
  EXPECT_THAT(permit.error().message(), HasSubstr(cluster().urls()[0].substr(0, 10)));
  EXPECT_TRUE(eventually([&] { return get(0, "shared-name") == lock->value(); }))
      << "the lock was touched";

  auto semaphore = client->acquire_permit("pool", permits(2));
  ASSERT_TRUE(semaphore);
  auto exclusive = client->try_lock("pool", 10s);
  ASSERT_FALSE(exclusive);
  EXPECT_EQ(exclusive.error(), errc::wrong_kind);
  EXPECT_THAT(exclusive.error().message(), HasSubstr("the key is a semaphore"));
  // The exclusive lock's owner-checked scripts read the set as "not ours", never WRONGTYPE.
  EXPECT_EQ(client->release("pool", semaphore->value()).code(), make_error_code(errc::not_held));
  EXPECT_EQ(client->extend("pool", semaphore->value(), 10s).code(),
            make_error_code(errc::not_held));
  for (std::size_t node = 0; node < 5; ++node) {
    EXPECT_TRUE(eventually([&] { return holders(node, "pool") == 1; })) << "node " << node;
  }
  // status() reads exclusive locks; on a semaphore each node says what the key is.
  auto status = client->status("pool");
  ASSERT_TRUE(status);
  for (const auto& node : *status) {
    EXPECT_EQ(node.error, make_error_code(errc::wrong_kind)) << describe(node);
    EXPECT_EQ(node.detail, "the key is a semaphore");
  }
}

TEST_F(SemaphoreTest, BadInputIsAClearErrorAndSendsNothing) {
  auto client = Client::create(options());
  auto zero = client->acquire_permit("pool", permits(0));
  EXPECT_EQ(zero.error(), errc::invalid_argument);
  EXPECT_THAT(zero.error().message(), HasSubstr("permits: must be >= 1, got 0"));
  auto unsafe = client->acquire_permit("pool", {.permits = 3, .quorum = 3, .lock = {.ttl = 10s}});
  EXPECT_EQ(unsafe.error(), errc::invalid_argument);
  EXPECT_THAT(unsafe.error().message(), HasSubstr("q >= 4"));
  auto fenced =
      client->acquire_permit("pool", {.permits = 3, .lock = {.ttl = 10s, .fencing = true}});
  EXPECT_EQ(fenced.error(), errc::invalid_argument);
  EXPECT_THAT(fenced.error().message(), HasSubstr("no fencing token"));
  EXPECT_EQ(client->acquire_permit("", permits(3)).error(), errc::invalid_argument);
  EXPECT_EQ(client->semaphore_quorum(0).error(), errc::invalid_argument);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(cluster()[i].command({"DBSIZE"}).integer, 0);
}

// Three clients, each cut off from a different pair or single node (its options name an
// unreachable socket there), take permits of a K = 2 semaphore. Placed like this, no node
// ever holds more than two of them, so every node admits its share:
//   A: nodes 0 1 2      B: nodes 2 3 4      C: nodes 0 1 3 4
// With q = 3 all three are granted: three holders of two permits. The safe q = 4 refuses A.
class SemaphoreQuorumBoundTest : public SemaphoreTest {
 protected:
  static std::shared_ptr<detail::Engine> cut_off(std::initializer_list<std::size_t> unreachable) {
    auto opts = options(50ms);
    for (std::size_t node : unreachable) {
      opts.nodes[node] = "unix:///nonexistent/redlock-" + std::to_string(node) + ".sock";
    }
    return detail::Engine::create(opts);
  }

  static Result<std::shared_ptr<detail::LockState>> take(
      const std::shared_ptr<detail::Engine>& engine, int quorum) {
    return detail::call_sync<std::shared_ptr<detail::LockState>>(
        *engine, "acquire", [engine, quorum](auto deliver) {
          detail::start_acquire(engine, detail::Kind::permit("bounded", 2, quorum), {.ttl = 10s},
                                std::move(deliver));
        });
  }

  static int concurrent_holders(int quorum) {
    auto a = cut_off({3, 4});
    auto b = cut_off({0, 1});
    auto c = cut_off({2});
    int granted = 0;
    for (auto* engine : {&a, &b, &c}) {
      auto permit = take(*engine, quorum);
      if (permit) ++granted;
    }
    for (auto* engine : {&a, &b, &c}) (*engine)->close();
    return granted;
  }
};

TEST_F(SemaphoreQuorumBoundTest, BelowTheBoundKPlusOneHoldersCoexist) {
  EXPECT_EQ(concurrent_holders(3), 3) << "the placement should break a quorum of 3";
}

TEST_F(SemaphoreQuorumBoundTest, AtTheBoundAtMostKHoldersExist) {
  EXPECT_LE(concurrent_holders(4), 2);
}

}  // namespace
}  // namespace redlock

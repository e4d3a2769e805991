// The Asio adapter (include/redlock/asio.hpp) against five real redis-server processes:
// the same operations as coroutines (use_awaitable), futures (use_future) and plain
// handlers, completed on the handler's executor, and cancelled through Asio's
// per-operation cancellation slots.

#include <gtest/gtest.h>

#include <array>
#include <asio.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <redlock/asio.hpp>
#include <redlock/redlock.hpp>

#include "support/lock_nodes_fixture.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using namespace ::asio::experimental::awaitable_operators;
using Clock = std::chrono::steady_clock;

long long ms_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

class AsioTest : public test::LockNodesTest {
 protected:
  /// The id of the client's loop thread, where its own callbacks run.
  static std::thread::id loop_thread(Client& client) {
    std::promise<std::thread::id> id;
    client.status_async("k", [&](auto) { id.set_value(std::this_thread::get_id()); });
    return id.get_future().get();
  }
};

TEST_F(AsioTest, CoroutineRunsEveryOperationAndResumesOnItsExecutor) {
  auto client = Client::create(options());
  ::asio::io_context io;
  const auto io_thread = std::this_thread::get_id();
  bool finished = false;
  ::asio::co_spawn(
      io,
      [&]() -> ::asio::awaitable<void> {
        auto lock = co_await asio::async_lock(*client, "k", {.ttl = 10s, .wait = 1s},
                                              ::asio::use_awaitable);
        EXPECT_EQ(std::this_thread::get_id(), io_thread);
        if (!lock) {
          ADD_FAILURE() << lock.error().message();
          co_return;
        }
        auto conflict = co_await asio::async_try_lock(*client, "k", 1s, ::asio::use_awaitable);
        EXPECT_EQ(conflict.code(), make_error_code(errc::conflict));

        const auto before = lock->valid_until();
        auto extended = co_await asio::async_extend(*lock, 30s, ::asio::use_awaitable);
        EXPECT_TRUE(extended) << extended.error().message();
        EXPECT_GT(lock->valid_until(), before + 15s);

        auto by_value =
            co_await asio::async_extend(*client, "k", lock->value(), 30s, ::asio::use_awaitable);
        EXPECT_TRUE(by_value);

        auto status = co_await asio::async_status(*client, "k", ::asio::use_awaitable);
        EXPECT_TRUE(status);
        if (status) {
          for (const auto& node : *status) EXPECT_EQ(node.holder, lock->value());
        }
        auto views = co_await asio::async_inspect(*client, "k", ::asio::use_awaitable);
        EXPECT_TRUE(views);
        if (views) {
          for (const auto& view : *views) {
            EXPECT_EQ(view.kind, LockKind::exclusive);
            EXPECT_EQ(view.holders.size(), 1u);
            if (!view.holders.empty()) {
              EXPECT_EQ(view.holders[0].value, lock->value());
            }
          }
        }

        auto unlocked = co_await asio::async_unlock(*lock, ::asio::use_awaitable);
        EXPECT_TRUE(unlocked);
        EXPECT_EQ(std::this_thread::get_id(), io_thread);
        finished = true;
      },
      ::asio::detached);
  io.run();
  EXPECT_TRUE(finished);
  EXPECT_TRUE(gone_everywhere("k"));
}

// A campaign as an Asio operation: the first candidate leads with a term, the second
// waits and is cancelled through its slot, then leads once the first resigns, with a
// greater term.
TEST_F(AsioTest, CampaignLeadsAndIsCancelledThroughItsSlot) {
  auto first_client = Client::create(options());
  auto second_client = Client::create(options());
  Election first(first_client, "asio:election", "first", 10s);
  Election second(second_client, "asio:election", "second", 10s);
  auto leading = redlock::asio::async_campaign(first, 5s, ::asio::use_future).get();
  ASSERT_TRUE(leading) << leading.error().message();

  ::asio::io_context io;
  ::asio::cancellation_signal cancel;
  std::optional<Result<Leadership>> waited;
  redlock::asio::async_campaign(
      second, 20s,
      ::asio::bind_cancellation_slot(
          cancel.slot(),
          ::asio::bind_executor(io, [&](Result<Leadership> r) { waited.emplace(std::move(r)); })));
  ::asio::steady_timer timer(io, 100ms);
  timer.async_wait([&](std::error_code) { cancel.emit(::asio::cancellation_type::terminal); });
  io.run();
  ASSERT_TRUE(waited.has_value());
  ASSERT_FALSE(*waited);
  EXPECT_EQ(waited->error(), errc::cancelled) << waited->error().message();

  const auto first_term = leading->term();
  ASSERT_TRUE(leading->resign());
  auto next = redlock::asio::async_campaign(second, 5s, ::asio::use_future).get();
  ASSERT_TRUE(next) << next.error().message();
  EXPECT_GT(next->term(), first_term);
  ASSERT_TRUE(next->resign());
}

TEST_F(AsioTest, FuturesWork) {
  auto client = Client::create(options());
  std::future<Result<Lock>> taken = asio::async_try_lock(*client, "k", 10s, ::asio::use_future);
  auto lock = taken.get();
  ASSERT_TRUE(lock) << lock.error().message();
  auto released = asio::async_release(*client, "k", lock->value(), ::asio::use_future).get();
  EXPECT_TRUE(released) << released.error().message();
  EXPECT_TRUE(gone_everywhere("k"));
}

TEST_F(AsioTest, PlainHandlersCompleteOnTheirExecutorNeverOnTheLoopThread) {
  auto client = Client::create(options());
  const auto loop = loop_thread(*client);
  ::asio::io_context io;
  std::optional<Result<Lock>> result;
  std::thread::id ran_on;
  asio::async_lock(*client, "k", {.ttl = 10s}, ::asio::bind_executor(io, [&](Result<Lock> r) {
    ran_on = std::this_thread::get_id();
    result.emplace(std::move(r));
  }));
  // No work guard of our own: the pending operation keeps run() from returning early.
  io.run();
  ASSERT_TRUE(result.has_value());
  ASSERT_TRUE(*result) << result->error().message();
  EXPECT_EQ(ran_on, std::this_thread::get_id());

  // Without an associated executor the handler goes to the system executor, never the
  // client's loop thread.
  std::promise<std::thread::id> plain;
  asio::async_status(*client, "k", [&](auto) { plain.set_value(std::this_thread::get_id()); });
  EXPECT_NE(plain.get_future().get(), loop);
}

TEST_F(AsioTest, AwaitableOperatorCancelsTheLoser) {
  auto holder = Client::create(options())->try_lock("k", 30s);
  ASSERT_TRUE(holder);
  auto client = Client::create(options());
  ::asio::io_context io;
  std::optional<std::size_t> winner;
  const auto started = Clock::now();
  ::asio::co_spawn(
      io,
      [&]() -> ::asio::awaitable<void> {
        ::asio::steady_timer timer(co_await ::asio::this_coro::executor, 150ms);
        auto first = co_await (
            asio::async_lock(*client, "k", {.ttl = 10s, .wait = 20s}, ::asio::use_awaitable) ||
            timer.async_wait(::asio::use_awaitable));
        winner = first.index();
      },
      ::asio::detached);
  io.run();
  ASSERT_TRUE(winner.has_value());
  EXPECT_EQ(*winner, 1u) << "the timer wins; the lock wait is cancelled";
  EXPECT_LT(ms_since(started), 2000) << "the lock wait was not cancelled";
}

// Every acquisition, each waiting behind a holder of its own kind.
enum class Acquisition { lock, read, write, permit, all };

std::string to_string(Acquisition kind) {
  switch (kind) {
    case Acquisition::lock:
      return "lock";
    case Acquisition::read:
      return "read_lock";
    case Acquisition::write:
      return "write_lock";
    case Acquisition::permit:
      return "acquire_permit";
    case Acquisition::all:
      return "lock_all";
  }
  return "?";
}

class AsioAcquisitionTest : public AsioTest, public ::testing::WithParamInterface<Acquisition> {
 protected:
  /// The adapter's operation of this kind on "k" (and "k2" for lock_all).
  template <typename Token>
  static auto acquire(Client& client, LockOptions options, Token&& token) {
    switch (GetParam()) {
      case Acquisition::read:
        return asio::async_read_lock(client, "k", std::move(options), std::forward<Token>(token));
      case Acquisition::write:
        return asio::async_write_lock(client, "k", std::move(options), std::forward<Token>(token));
      case Acquisition::permit:
        return asio::async_acquire_permit(client, "k", {.permits = 1, .lock = std::move(options)},
                                          std::forward<Token>(token));
      case Acquisition::all: {
        // Gone before a deferred initiation (use_awaitable) runs: the adapter copies them.
        const std::array<std::string, 2> set{"k", "k2"};
        return asio::async_lock_all(client, set, std::move(options), std::forward<Token>(token));
      }
      case Acquisition::lock:
        break;
    }
    return asio::async_lock(client, "k", std::move(options), std::forward<Token>(token));
  }

  /// A hold that keeps this kind's acquisition waiting: a writer keeps readers out, a
  /// reader keeps writers out, the only permit, and the second key of the set.
  static Result<Lock> conflicting_hold(Client& client) {
    const LockOptions hold{.ttl = 30s};
    switch (GetParam()) {
      case Acquisition::read:
        return client.write_lock("k", hold);
      case Acquisition::write:
        return client.read_lock("k", hold);
      case Acquisition::permit:
        return client.acquire_permit("k", {.permits = 1, .lock = hold});
      case Acquisition::all:
        return client.try_lock("k2", 30s);
      case Acquisition::lock:
        break;
    }
    return client.try_lock("k", 30s);
  }

  static std::vector<std::string> keys() {
    if (GetParam() == Acquisition::all) return {"k", "k2"};
    return {"k"};
  }

  /// Whether every holder of the keys, on every node, is `value` (none at all when
  /// empty): a waiting writer's intent or a partly granted attempt counts as a leak.
  static bool held_only_by(Client& client, const std::string& value) {
    for (const auto& key : keys()) {
      auto views = client.inspect(key);
      if (!views) return false;
      for (const auto& view : *views) {
        if (view.outcome.error) return false;
        for (const auto& holder : view.holders) {
          if (value.empty() || holder.value != value) return false;
        }
      }
    }
    return true;
  }
};

TEST_P(AsioAcquisitionTest, FutureAcquiresAndUnlockFreesTheKey) {
  auto client = Client::create(options());
  std::future<Result<Lock>> taken = acquire(*client, {.ttl = 10s}, ::asio::use_future);
  auto lock = taken.get();
  ASSERT_TRUE(lock) << lock.error().message();
  EXPECT_TRUE(eventually([&] { return held_only_by(*client, lock->value()); }));
  auto unlocked = asio::async_unlock(*lock, ::asio::use_future).get();
  EXPECT_TRUE(unlocked) << unlocked.error().message();
  EXPECT_TRUE(eventually([&] { return held_only_by(*client, ""); }));
}

TEST_P(AsioAcquisitionTest, CoroutineAcquiresAndResumesOnItsExecutor) {
  auto client = Client::create(options());
  ::asio::io_context io;
  const auto io_thread = std::this_thread::get_id();
  std::optional<Result<Lock>> result;
  ::asio::co_spawn(
      io,
      [&]() -> ::asio::awaitable<void> {
        result.emplace(co_await acquire(*client, {.ttl = 10s}, ::asio::use_awaitable));
        EXPECT_EQ(std::this_thread::get_id(), io_thread);
      },
      ::asio::detached);
  io.run();
  ASSERT_TRUE(result.has_value());
  ASSERT_TRUE(*result) << result->error().message();
  EXPECT_TRUE((*result)->unlock());
}

TEST_P(AsioAcquisitionTest, CancellationSlotEndsTheWaitAndLeavesNothing) {
  auto other = Client::create(options());
  auto holder = conflicting_hold(*other);
  ASSERT_TRUE(holder) << holder.error().message();
  auto client = Client::create(options());
  ::asio::io_context io;
  ::asio::cancellation_signal cancel;
  std::optional<Result<Lock>> result;
  Clock::time_point emitted;
  acquire(*client, {.ttl = 10s, .wait = 20s},
          ::asio::bind_cancellation_slot(
              cancel.slot(),
              ::asio::bind_executor(io, [&](Result<Lock> r) { result.emplace(std::move(r)); })));
  ::asio::steady_timer timer(io, 100ms);
  timer.async_wait([&](std::error_code) {
    emitted = Clock::now();
    cancel.emit(::asio::cancellation_type::terminal);
  });
  io.run();
  ASSERT_TRUE(result.has_value());
  ASSERT_FALSE(*result);
  EXPECT_EQ(result->error(), errc::cancelled) << result->error().message();
  EXPECT_LT(ms_since(emitted), 1000);

  EXPECT_TRUE(eventually([&] { return held_only_by(*client, holder->value()); }))
      << "the cancelled acquisition left something on a node";
  ASSERT_TRUE(holder->unlock());
  // Free again: the same acquisition succeeds at its first attempt.
  auto again = acquire(*client, {.ttl = 10s}, ::asio::use_future).get();
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_TRUE(again->unlock());
  EXPECT_TRUE(eventually([&] { return held_only_by(*client, ""); }));
}

// A handler with a cancellation slot but no executor of its own completes on the system
// executor's threads, while the signal belongs to the thread that emits it: the
// operation must not touch the slot from the completing thread. The emitter keeps
// emitting until the handler ran, so the completion meets a signal in use.
TEST_P(AsioAcquisitionTest, PlainHandlerWithASlotCompletesWhileItsSignalIsEmitted) {
  auto other = Client::create(options());
  auto holder = conflicting_hold(*other);
  ASSERT_TRUE(holder) << holder.error().message();
  auto client = Client::create(options());
  for (int round = 0; round < 200; ++round) {
    ::asio::io_context io;
    ::asio::cancellation_signal cancel;
    std::optional<Result<Lock>> result;
    std::atomic<bool> done{false};
    acquire(*client, {.ttl = 10s, .wait = 20s},
            ::asio::bind_cancellation_slot(cancel.slot(), [&](Result<Lock> r) {
              result.emplace(std::move(r));
              done.store(true, std::memory_order_release);
            }));
    std::function<void()> emit = [&] {
      cancel.emit(::asio::cancellation_type::terminal);
      if (!done.load(std::memory_order_acquire)) ::asio::post(io, emit);
    };
    ::asio::post(io, emit);
    io.run();
    ASSERT_TRUE(result.has_value());
    ASSERT_FALSE(*result);
    ASSERT_EQ(result->error(), errc::cancelled) << result->error().message();
  }
  EXPECT_TRUE(eventually([&] { return held_only_by(*client, holder->value()); }));
}

INSTANTIATE_TEST_SUITE_P(Kinds, AsioAcquisitionTest,
                         ::testing::Values(Acquisition::lock, Acquisition::read, Acquisition::write,
                                           Acquisition::permit, Acquisition::all),
                         [](const auto& info) { return to_string(info.param); });

}  // namespace
}  // namespace redlock

// The Asio adapter (include/redlock/asio.hpp) against five real redis-server processes:
// the same operations as coroutines (use_awaitable), futures (use_future) and plain
// handlers, completed on the handler's executor, and cancelled through Asio's
// per-operation cancellation slots.

#include <gtest/gtest.h>

#include <asio.hpp>
#include <asio/experimental/awaitable_operators.hpp>
#include <atomic>
#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <thread>

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

TEST_F(AsioTest, CancellationSlotEndsAWaitingLock) {
  auto holder = Client::create(options())->try_lock("k", 30s);
  ASSERT_TRUE(holder);
  auto client = Client::create(options());
  ::asio::io_context io;
  ::asio::cancellation_signal cancel;
  std::optional<Result<Lock>> result;
  Clock::time_point emitted;
  asio::async_lock(
      *client, "k", {.ttl = 10s, .wait = 20s},
      ::asio::bind_cancellation_slot(cancel.slot(), ::asio::bind_executor(io, [&](Result<Lock> r) {
                                       result.emplace(std::move(r));
                                     })));
  ::asio::steady_timer timer(io, 100ms);
  timer.async_wait([&](std::error_code) {
    emitted = Clock::now();
    cancel.emit(::asio::cancellation_type::terminal);
  });
  io.run();
  ASSERT_TRUE(result.has_value());
  ASSERT_FALSE(*result);
  EXPECT_EQ(result->error(), errc::cancelled);
  EXPECT_LT(ms_since(emitted), 200);
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

}  // namespace
}  // namespace redlock

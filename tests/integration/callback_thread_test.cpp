// Where the application's code runs. The headers promise the client's loop thread for
// every callback (async results, on_lost, the observer, the log), one at a time; a
// synchronous call may run the loop on its own thread while it waits for its answer
// (SyncCalls::lead), so these tests keep synchronous callers busy on other threads while
// callbacks of every kind come due, and check that each ran on one and the same thread,
// never inside a synchronous call: with callers that lead and with callers that hand
// off. Against five real nodes.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "support/lock_nodes_fixture.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;

// The threads the application's code ran on.
class Threads {
 public:
  void record() {
    std::lock_guard lock(mutex_);
    seen_.insert(std::this_thread::get_id());
    ++calls_;
  }
  std::set<std::thread::id> seen() const {
    std::lock_guard lock(mutex_);
    return seen_;
  }
  int calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  mutable std::mutex mutex_;
  std::set<std::thread::id> seen_;
  int calls_ = 0;
};

// Threads that lock and unlock in a loop, each its own key, until stopped; their ids.
class SyncCallers {
 public:
  SyncCallers(Client& client, int count, const std::string& prefix) {
    for (int i = 0; i < count; ++i) {
      threads_.emplace_back([this, &client, key = prefix + std::to_string(i)] {
        {
          std::lock_guard lock(mutex_);
          ids_.insert(std::this_thread::get_id());
        }
        while (!stop_) {
          auto held = client.try_lock(key, 5s);
          if (held) {
            (void)held->unlock();
            ++cycles_;
          }
        }
      });
    }
  }
  ~SyncCallers() { stop(); }
  SyncCallers(const SyncCallers&) = delete;
  SyncCallers& operator=(const SyncCallers&) = delete;

  void stop() {
    stop_ = true;
    for (auto& thread : threads_) {
      if (thread.joinable()) thread.join();
    }
  }
  std::set<std::thread::id> ids() const {
    std::lock_guard lock(mutex_);
    return ids_;
  }
  int cycles() const { return cycles_; }

 private:
  std::vector<std::thread> threads_;
  mutable std::mutex mutex_;
  std::set<std::thread::id> ids_;
  std::atomic<bool> stop_{false};
  std::atomic<int> cycles_{0};
};

// Each test runs with both ways of making synchronous calls.
class CallbackThreadTest : public test::LockNodesTest,
                           public ::testing::WithParamInterface<SyncCalls> {
 protected:
  static Options options_for_mode() {
    auto opts = options();
    opts.sync_calls = GetParam();
    return opts;
  }

  // Every recorded thread is the one loop thread, none of them a synchronous caller.
  static void expect_loop_thread_only(const Threads& callbacks, const SyncCallers& callers) {
    const auto seen = callbacks.seen();
    EXPECT_EQ(seen.size(), 1u) << "callbacks ran on " << seen.size() << " threads";
    for (const auto& id : callers.ids()) {
      EXPECT_EQ(seen.count(id), 0u) << "a callback ran inside a synchronous call";
    }
  }
};

// Async acquisitions of every kind, their unlock_async and extend_async, started and
// answered while two threads make synchronous calls on the same client.
TEST_P(CallbackThreadTest, AsyncResultsOfEveryKindRunOnTheLoopThread) {
  auto client = Client::create(options_for_mode());
  Threads callbacks;
  SyncCallers callers(*client, 2, "thread:sync:");
  using Start = std::function<void(Client::LockCallback)>;
  const std::vector<Start> kinds = {
      [&](Client::LockCallback done) {
        client->lock_async("thread:lock", {.ttl = 5s}, std::move(done));
      },
      [&](Client::LockCallback done) {
        client->read_lock_async("thread:rw", {.ttl = 5s}, std::move(done));
      },
      [&](Client::LockCallback done) {
        client->write_lock_async("thread:w", {.ttl = 5s}, std::move(done));
      },
      [&](Client::LockCallback done) {
        client->acquire_permit_async("thread:sem", {.permits = 2, .lock = {.ttl = 5s}},
                                     std::move(done));
      },
      [&](Client::LockCallback done) {
        static const std::vector<std::string> keys = {"thread:all:a", "thread:all:b"};
        client->lock_all_async(keys, {.ttl = 5s}, std::move(done));
      },
  };
  constexpr int rounds = 40;
  std::atomic<int> finished{0};
  std::promise<void> all_finished;
  const int expected = rounds * static_cast<int>(kinds.size());
  auto one_finished = [&] {
    if (++finished == expected) all_finished.set_value();
  };
  for (int round = 0; round < rounds; ++round) {
    for (const auto& start : kinds) {
      start([&, one_finished](Result<Lock> lock) {
        callbacks.record();
        if (!lock) return one_finished();
        auto held = std::make_shared<Lock>(std::move(*lock));
        held->extend_async(5s, [&, held, one_finished](Result<void>) {
          callbacks.record();
          held->unlock_async([&, held, one_finished](Result<void>) {
            callbacks.record();
            one_finished();
          });
        });
      });
    }
    std::this_thread::sleep_for(2ms);
  }
  auto done = all_finished.get_future();
  ASSERT_EQ(done.wait_for(30s), std::future_status::ready);
  callers.stop();
  EXPECT_GT(callers.cycles(), 0);
  EXPECT_GE(callbacks.calls(), expected);
  expect_loop_thread_only(callbacks, callers);
}

// A watchdog that loses its lock calls on_lost while a synchronous caller may be running
// the loop.
TEST_P(CallbackThreadTest, OnLostRunsOnTheLoopThread) {
  auto client = Client::create(options_for_mode());
  Threads callbacks;
  std::promise<void> lost;
  std::atomic<bool> reported{false};
  client->status_async("thread:status", [&](auto) { callbacks.record(); });
  auto lock =
      client->lock("thread:lost", {.ttl = 600ms, .auto_extend = true, .on_lost = [&](const Error&) {
                                     callbacks.record();
                                     if (!reported.exchange(true)) lost.set_value();
                                   }});
  ASSERT_TRUE(lock) << lock.error().message();
  SyncCallers callers(*client, 2, "thread:lost-sync:");
  for (std::size_t i = 0; i < cluster().size(); ++i) {
    cluster()[i].command({"DEL", "thread:lost"});
  }
  auto future = lost.get_future();
  ASSERT_EQ(future.wait_for(10s), std::future_status::ready) << "on_lost never ran";
  callers.stop();
  expect_loop_thread_only(callbacks, callers);
}

// The observer and the log sink hear every event on the loop thread, synchronous
// operations' events included.
TEST_P(CallbackThreadTest, ObserverAndLogRunOnTheLoopThread) {
  struct Recorder : Observer {
    explicit Recorder(Threads& threads) : threads(threads) {}
    void on_attempt(const AttemptEvent&) override { threads.record(); }
    void on_lock(const LockEvent&) override { threads.record(); }
    Threads& threads;
  };
  Threads callbacks;
  auto opts = options_for_mode();
  opts.observer = std::make_shared<Recorder>(callbacks);
  opts.log = [&](LogLevel, std::string_view) { callbacks.record(); };
  opts.log_level = LogLevel::debug;
  auto client = Client::create(opts);
  SyncCallers callers(*client, 2, "thread:observed:");
  std::this_thread::sleep_for(300ms);
  callers.stop();
  EXPECT_GT(callers.cycles(), 0);
  EXPECT_GT(callbacks.calls(), callers.cycles());
  expect_loop_thread_only(callbacks, callers);
}

INSTANTIATE_TEST_SUITE_P(SyncCalls, CallbackThreadTest,
                         ::testing::Values(SyncCalls::lead, SyncCalls::hand_off),
                         [](const ::testing::TestParamInfo<SyncCalls>& info) {
                           return info.param == SyncCalls::lead ? "lead" : "hand_off";
                         });

}  // namespace
}  // namespace redlock

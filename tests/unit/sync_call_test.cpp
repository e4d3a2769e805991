// Synchronous calls over scripted nodes (tests/support/scripted_node.hpp), whose answers
// come from the loop's timers, never from a socket. A caller that runs the loop itself
// (leader/followers) must return as soon as its answer came, in whatever phase of the
// loop's turn that was: a loop turn that goes on to wait for I/O after a timer answered
// it would keep the caller there until some later event, here forever. Each test runs
// with both ways of making synchronous calls (Options::sync_calls).

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <redlock/redlock.hpp>

#include "client/api/client_access.hpp"
#include "client/engine/engine.hpp"
#include "must_finish.hpp"
#include "scripted_node.hpp"

namespace redlock::detail {
namespace {

using namespace std::chrono_literals;

std::shared_ptr<Client> scripted_client(ScriptedObserved& observed, SyncCalls mode,
                                        Options options = {}) {
  options.sync_calls = mode;
  // No server behind these: the release announcements' subscriber connections fail.
  for (int i = 1; i <= 5; ++i) {
    options.nodes.push_back("unix:///nonexistent/redlock-sync-call-" + std::to_string(i) + ".sock");
  }
  auto engine = Engine::create(options, [&](uv_loop_s* loop, net::ConnectionOptions connection) {
    return std::make_unique<ScriptedNode>(loop, connection.endpoint.display, observed);
  });
  return ClientAccess::make(engine);
}

using test::must_finish;

class SyncCall : public ::testing::TestWithParam<SyncCalls> {};

TEST_P(SyncCall, OneCallerAnsweredByTimersReturns) {
  ScriptedObserved observed;
  auto client = scripted_client(observed, GetParam());
  std::atomic<int> cycles{0};
  auto done = std::async(std::launch::async, [&] {
    for (int i = 0; i < 200; ++i) {
      auto lock = client->try_lock("sync-call", 10s);
      if (!lock) return;
      if (lock->unlock()) ++cycles;
    }
  });
  must_finish(done, 10s, "200 lock/unlock cycles on one thread");
  EXPECT_EQ(cycles.load(), 200);
  client->close();
}

TEST_P(SyncCall, ManyCallersAnsweredByTimersReturn) {
  ScriptedObserved observed;
  auto client = scripted_client(observed, GetParam());
  constexpr int threads = 4;
  constexpr int per_thread = 100;
  std::atomic<int> cycles{0};
  auto done = std::async(std::launch::async, [&] {
    std::vector<std::thread> callers;
    for (int t = 0; t < threads; ++t) {
      callers.emplace_back([&, key = "sync-call:" + std::to_string(t)] {
        for (int i = 0; i < per_thread; ++i) {
          auto lock = client->try_lock(key, 10s);
          if (lock && lock->unlock()) ++cycles;
        }
      });
    }
    for (auto& caller : callers) caller.join();
  });
  must_finish(done, 20s, "lock/unlock cycles on four threads");
  EXPECT_EQ(cycles.load(), threads * per_thread);
  client->close();
}

// Who sends a synchronous call's commands: the calling thread itself when it leads an
// idle client (no handoff), the loop thread alone when calls hand off. A call leads only
// when the background thread is not running the loop (the first call after a quiet spell
// hands off, and on a loaded machine the background thread may not yet have gone back to
// watching from outside), so the caller pauses between cycles and the lead case asks
// only that some call within two seconds led: one that never does is the bug.
TEST_P(SyncCall, ALeadingCallerSendsItsOwnCommandsAndAHandOffNever) {
  ScriptedObserved observed;
  auto client = scripted_client(observed, GetParam());
  const bool lead = GetParam() == SyncCalls::lead;
  std::promise<std::thread::id> caller;
  auto done = std::async(std::launch::async, [&] {
    const auto self = std::this_thread::get_id();
    caller.set_value(self);
    const auto until = std::chrono::steady_clock::now() + 2s;
    for (int cycles = 0; lead ? std::chrono::steady_clock::now() < until : cycles < 50; ++cycles) {
      auto lock = client->try_lock("sync-call:sender", 10s);
      if (!lock || !lock->unlock()) return;
      if (lead && observed.acquire_threads().count(self) > 0) return;
      std::this_thread::sleep_for(2ms);
    }
  });
  must_finish(done, 10s, "the lock/unlock cycles");
  const auto caller_id = caller.get_future().get();
  const auto senders = observed.acquire_threads();
  if (lead) {
    EXPECT_EQ(senders.count(caller_id), 1u) << "no acquire was sent by the leading caller";
  } else {
    EXPECT_EQ(senders.count(caller_id), 0u) << "a handed-off call ran on its caller";
    EXPECT_EQ(senders.size(), 1u) << "acquires sent from " << senders.size() << " threads";
  }
  client->close();
}

// What an observer and a log sink heard, and on which threads.
class Heard : public Observer {
 public:
  void on_attempt(const AttemptEvent& event) override {
    record("attempt " + std::string(event.key));
  }
  void on_acquire(const AcquireEvent& event) override {
    record("acquire " + std::string(event.key));
  }
  void on_lock(const LockEvent& event) override {
    record(std::string(to_string(event.operation)) + " " + std::string(event.key) +
           (event.nodes.size() == 5 ? "" : " (nodes missing)"));
  }
  void line(std::string_view text) { record("log " + std::string(text)); }
  /// The last event other than a log line ("" when none).
  std::string last() const {
    std::lock_guard lock(mutex_);
    for (auto it = events_.rbegin(); it != events_.rend(); ++it) {
      if (it->rfind("log ", 0) != 0) return *it;
    }
    return {};
  }
  std::vector<std::string> events() const {
    std::lock_guard lock(mutex_);
    return events_;
  }
  std::set<std::thread::id> threads() const {
    std::lock_guard lock(mutex_);
    return threads_;
  }

 private:
  void record(std::string event) {
    std::lock_guard lock(mutex_);
    events_.push_back(std::move(event));
    threads_.insert(std::this_thread::get_id());
  }
  mutable std::mutex mutex_;
  std::vector<std::string> events_;
  std::set<std::thread::id> threads_;
};

enum class Listener { observer, log, both };

// An observer, a log sink or both change nothing of how a synchronous call reaches the
// loop: a caller still leads (it sends its own acquires), and what it hears while it
// leads is told on the client's own thread, never the caller's, in the order it happened,
// nothing lost: every cycle's attempt, acquisition and release, once each, in order.
class ObservedSyncCall : public ::testing::TestWithParam<std::tuple<SyncCalls, Listener>> {};

TEST_P(ObservedSyncCall, ListeningChangesNothingOfHowCallsReachTheLoopAndLosesNothing) {
  const SyncCalls mode = std::get<0>(GetParam());
  const Listener listener = std::get<1>(GetParam());
  const bool lead = mode == SyncCalls::lead;
  ScriptedObserved observed;
  auto heard = std::make_shared<Heard>();
  Options options;
  if (listener != Listener::log) options.observer = heard;
  if (listener != Listener::observer) {
    options.log = [heard](LogLevel, std::string_view line) { heard->line(line); };
    options.log_level = LogLevel::debug;
  }
  auto client = scripted_client(observed, mode, options);
  std::promise<std::thread::id> caller;
  int cycles = 0;
  bool told_late = false;
  auto done = std::async(std::launch::async, [&] {
    const auto self = std::this_thread::get_id();
    caller.set_value(self);
    const auto until = std::chrono::steady_clock::now() + 2s;
    for (; lead ? std::chrono::steady_clock::now() < until : cycles < 50;) {
      const auto key = "observed:" + std::to_string(cycles);
      auto lock = client->try_lock(key, 10s);
      if (!lock || !lock->unlock()) return;
      ++cycles;
      // A call's events are told before it returns, whether it led or handed off
      // (observer.hpp): by the time unlock() returned, its release was heard.
      if (listener != Listener::log && heard->last() != "release " + key) {
        told_late = true;
      }
      if (lead && observed.acquire_threads().count(self) > 0 && cycles >= 20) return;
      std::this_thread::sleep_for(2ms);
    }
  });
  must_finish(done, 10s, "the observed lock/unlock cycles");
  const auto caller_id = caller.get_future().get();
  // Every event is told by the time the client has closed.
  client->close();
  client.reset();
  ASSERT_GT(cycles, 0);
  EXPECT_FALSE(told_late) << "a call returned before its events were told";
  const auto senders = observed.acquire_threads();
  EXPECT_EQ(senders.count(caller_id), lead ? 1u : 0u)
      << (lead ? "no acquire was sent by the leading caller" : "a handed-off call led");
  const auto threads = heard->threads();
  EXPECT_EQ(threads.size(), 1u) << "heard on " << threads.size() << " threads";
  EXPECT_EQ(threads.count(caller_id), 0u) << "an event was told inside a synchronous call";
  if (listener == Listener::log) {
    EXPECT_GE(heard->events().size(), static_cast<std::size_t>(cycles));
    return;
  }
  std::vector<std::string> expected;
  for (int i = 0; i < cycles; ++i) {
    const auto key = "observed:" + std::to_string(i);
    expected.push_back("attempt " + key);
    expected.push_back("acquire " + key);
    expected.push_back("release " + key);
  }
  std::vector<std::string> told;
  for (auto& event : heard->events()) {
    if (event.rfind("log ", 0) != 0) told.push_back(event);
  }
  EXPECT_EQ(told, expected);
}

std::string mode_and_listener(
    const ::testing::TestParamInfo<std::tuple<SyncCalls, Listener>>& info) {
  static const char* const listeners[] = {"observer", "log", "both"};
  return std::string(std::get<0>(info.param) == SyncCalls::lead ? "lead_" : "hand_off_") +
         listeners[static_cast<int>(std::get<1>(info.param))];
}

INSTANTIATE_TEST_SUITE_P(ModesAndListeners, ObservedSyncCall,
                         ::testing::Combine(::testing::Values(SyncCalls::lead, SyncCalls::hand_off),
                                            ::testing::Values(Listener::observer, Listener::log,
                                                              Listener::both)),
                         mode_and_listener);

INSTANTIATE_TEST_SUITE_P(Modes, SyncCall, ::testing::Values(SyncCalls::lead, SyncCalls::hand_off),
                         [](const ::testing::TestParamInfo<SyncCalls>& info) {
                           return info.param == SyncCalls::lead ? "lead" : "hand_off";
                         });

}  // namespace
}  // namespace redlock::detail

// Options::observer and Options::log against five real redis-server processes: every
// attempt with its outcome and votes, wakes, extend and release, the watchdog, and the
// node events (down, back, NOSCRIPT, overload) reach the observer and the log sink.

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "support/lock_nodes_fixture.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;

struct Attempt {
  std::string key;
  int attempt;
  AttemptOutcome outcome;
  std::chrono::microseconds latency;
  std::chrono::microseconds since_start;
  int granted;
  std::size_t nodes;
};
struct Node {
  std::string node;
  NodeEventKind kind;
  std::error_code error;
  std::string detail;
};

/// Copies every event (they are valid only during the call) under a mutex: the test
/// thread reads what the loop thread wrote.
class Recorder final : public Observer {
 public:
  void on_attempt(const AttemptEvent& e) override {
    add([&] {
      attempts.push_back({std::string(e.key), e.attempt, e.outcome, e.latency, e.since_start,
                          e.granted, e.nodes.size()});
    });
  }
  void on_acquire(const AcquireEvent& e) override {
    add([&] { acquires.push_back({e.outcome, e.attempts, e.duration}); });
  }
  void on_wake(const WakeEvent& e) override {
    add([&] { wakes.push_back({e.cause, e.since_start}); });
  }
  void on_lock(const LockEvent& e) override {
    add([&] { locks.push_back({e.operation, e.confirmed, e.confirmed_nodes}); });
  }
  void on_watchdog(const WatchdogEvent& e) override {
    add([&] {
      watchdog.push_back({e.lost, e.error != nullptr ? e.error->code() : std::error_code()});
    });
  }
  void on_node(const NodeEvent& e) override {
    add([&] { nodes.push_back({std::string(e.node), e.kind, e.error, std::string(e.detail)}); });
  }

  /// Waits up to `timeout` for `ready` (called under the lock) to hold.
  bool wait_for(const std::function<bool()>& ready, std::chrono::milliseconds timeout = 5s) {
    std::unique_lock lock(mutex);
    return changed.wait_for(lock, timeout, ready);
  }
  int count(NodeEventKind kind, const std::string& node = {}) {
    int n = 0;
    for (const auto& e : nodes) n += e.kind == kind && (node.empty() || e.node == node);
    return n;
  }

  std::mutex mutex;
  std::condition_variable changed;
  std::vector<Attempt> attempts;
  struct AcquireRecord {
    AttemptOutcome outcome;
    int attempts;
    std::chrono::microseconds duration;
  };
  std::vector<AcquireRecord> acquires;
  std::vector<std::pair<WakeCause, std::chrono::microseconds>> wakes;
  struct LockRecord {
    LockOperation operation;
    bool confirmed;
    int confirmed_nodes;
  };
  std::vector<LockRecord> locks;
  std::vector<std::pair<bool, std::error_code>> watchdog;  // lost, why
  std::vector<Node> nodes;

 private:
  void add(const std::function<void()>& record) {
    {
      std::lock_guard lock(mutex);
      record();
    }
    changed.notify_all();
  }
};

struct Lines {
  std::mutex mutex;
  std::vector<std::pair<LogLevel, std::string>> lines;
  bool has(LogLevel level, const std::string& part) {
    std::lock_guard lock(mutex);
    for (const auto& [l, line] : lines) {
      if (l == level && line.find(part) != std::string::npos) return true;
    }
    return false;
  }
};

class ObserverTest : public test::LockNodesTest {
 protected:
  Options observed(LogLevel level = LogLevel::debug) {
    auto o = options();
    o.observer = recorder;
    o.log_level = level;
    o.log = [lines = lines](LogLevel l, std::string_view line) {
      std::lock_guard lock(lines->mutex);
      lines->lines.emplace_back(l, std::string(line));
    };
    return o;
  }
  /// Waits until every node's first connection was reported.
  void wait_connected() {
    ASSERT_TRUE(recorder->wait_for([&] { return recorder->count(NodeEventKind::connected) == 5; }))
        << "not every node reported connected";
  }

  /// Every node event so far, one per line, for a failure message.
  std::string node_events() {
    std::lock_guard guard(recorder->mutex);
    std::string text = "node events:";
    for (const auto& e : recorder->nodes) {
      text += "\n  " + e.node + " kind " + std::to_string(static_cast<int>(e.kind)) + " " +
              e.error.message() + " " + e.detail;
    }
    return text;
  }

  std::shared_ptr<Recorder> recorder = std::make_shared<Recorder>();
  std::shared_ptr<Lines> lines = std::make_shared<Lines>();
};

TEST_F(ObserverTest, AttemptsWithOutcomeVotesAndLatency) {
  auto client = Client::create(observed());
  auto other = Client::create(options());
  auto held = other->try_lock("obs:conflict", 10s);
  ASSERT_TRUE(held);
  auto refused = client->try_lock("obs:conflict", 10s);
  ASSERT_FALSE(refused);
  auto lock = client->try_lock("obs:free", 10s);
  ASSERT_TRUE(lock) << lock.error().message();

  std::lock_guard guard(recorder->mutex);
  ASSERT_EQ(recorder->attempts.size(), 2u);
  const auto& conflict = recorder->attempts[0];
  EXPECT_EQ(conflict.key, "obs:conflict");
  EXPECT_EQ(conflict.outcome, AttemptOutcome::conflict);
  EXPECT_EQ(conflict.attempt, 1);
  EXPECT_LT(conflict.granted, 3);
  EXPECT_EQ(conflict.nodes, 5u);
  ASSERT_EQ(recorder->acquires.size(), 2u);
  EXPECT_EQ(recorder->acquires[0].outcome, AttemptOutcome::conflict);
  EXPECT_EQ(recorder->acquires[0].attempts, 1);
  const auto& acquired = recorder->attempts[1];
  EXPECT_EQ(acquired.outcome, AttemptOutcome::acquired);
  EXPECT_GE(acquired.granted, 3);
  EXPECT_GT(acquired.latency.count(), 0);
  EXPECT_LT(acquired.latency, 1s);
  EXPECT_TRUE(lines->has(LogLevel::debug, "lock \"obs:free\" attempt 1: acquired"));
}

TEST_F(ObserverTest, ExtendAndReleaseConfirmedByTheNodes) {
  auto client = Client::create(observed());
  auto lock = client->try_lock("obs:extend", 10s);
  ASSERT_TRUE(lock);
  ASSERT_TRUE(lock->extend(10s));
  ASSERT_TRUE(lock->unlock());
  ASSERT_FALSE(client->extend("obs:extend", "not-the-owner", 10s));

  std::lock_guard guard(recorder->mutex);
  ASSERT_EQ(recorder->locks.size(), 3u);
  EXPECT_EQ(recorder->locks[0].operation, LockOperation::extend);
  EXPECT_TRUE(recorder->locks[0].confirmed);
  EXPECT_GE(recorder->locks[0].confirmed_nodes, 3);
  EXPECT_EQ(recorder->locks[1].operation, LockOperation::release);
  EXPECT_TRUE(recorder->locks[1].confirmed);
  EXPECT_EQ(recorder->locks[2].operation, LockOperation::extend);
  EXPECT_FALSE(recorder->locks[2].confirmed);
  EXPECT_TRUE(lines->has(LogLevel::warning, "extend \"obs:extend\" not confirmed"));
}

TEST_F(ObserverTest, AWaiterIsWokenByTheAnnouncementAndTheWaitIsMeasured) {
  auto holder = Client::create(options());
  auto held = holder->try_lock("obs:wait", 10s);
  ASSERT_TRUE(held);
  auto waiting = observed();
  waiting.retry_delay = 5s;  // only the announcement can wake it within the test
  auto client = Client::create(waiting);
  auto lock = lock_while_released(*client, "obs:wait", *held, 200ms, [this] {
    recorder->wait_for([this] { return !recorder->attempts.empty(); });
  });
  ASSERT_TRUE(lock) << lock.error().message();

  std::lock_guard guard(recorder->mutex);
  std::string story;
  for (const auto& a : recorder->attempts) {
    story += " attempt " + std::to_string(a.attempt) + " " + to_string(a.outcome) + " at " +
             std::to_string(a.since_start.count()) + " us;";
  }
  for (const auto& [cause, since] : recorder->wakes) {
    story +=
        std::string(" wake ") + to_string(cause) + " at " + std::to_string(since.count()) + " us;";
  }
  // The first wake is the announcement. It comes from the first node the release reaches,
  // so the attempt it starts may still meet the leaving holder on a quorum and look again
  // by its timer a moment later.
  ASSERT_FALSE(recorder->wakes.empty());
  EXPECT_EQ(recorder->wakes.front().first, WakeCause::announcement) << story;
  EXPECT_GE(recorder->wakes.front().second, 150ms) << story;
  ASSERT_GE(recorder->attempts.size(), 2u);
  EXPECT_EQ(recorder->attempts.front().outcome, AttemptOutcome::conflict);
  EXPECT_EQ(recorder->attempts.back().outcome, AttemptOutcome::acquired);
  EXPECT_EQ(recorder->attempts.back().attempt, static_cast<int>(recorder->attempts.size()));
  EXPECT_GE(recorder->attempts.back().since_start, 150ms);
  // One acquisition: its duration is the whole wait, its attempts all of them.
  ASSERT_EQ(recorder->acquires.size(), 1u);
  EXPECT_EQ(recorder->acquires[0].outcome, AttemptOutcome::acquired);
  EXPECT_EQ(recorder->acquires[0].attempts, static_cast<int>(recorder->attempts.size()));
  EXPECT_GE(recorder->acquires[0].duration, recorder->attempts.back().since_start);
}

TEST_F(ObserverTest, WatchdogExtensionsAndTheLossAreReported) {
  auto client = Client::create(observed());
  LockOptions options;
  options.ttl = 600ms;
  options.auto_extend = true;
  options.extend_every = 50ms;
  auto lock = client->lock("obs:watchdog", options);
  ASSERT_TRUE(lock);
  ASSERT_TRUE(recorder->wait_for([&] { return !recorder->watchdog.empty(); }));
  {
    std::lock_guard guard(recorder->mutex);
    EXPECT_FALSE(recorder->watchdog.front().first);
  }
  // Three nodes stop answering: no extension can reach a quorum.
  for (std::size_t i = 0; i < 3; ++i) cluster()[i].pause();
  ASSERT_TRUE(recorder->wait_for([&] {
    return !recorder->watchdog.empty() && recorder->watchdog.back().first;
  })) << "the loss was not reported";
  {
    std::lock_guard guard(recorder->mutex);
    EXPECT_EQ(recorder->watchdog.back().second, errc::lock_lost);
  }
  EXPECT_TRUE(lock->lost());
  EXPECT_TRUE(lines->has(LogLevel::error, "lock \"obs:watchdog\" lost by the watchdog"));
  for (std::size_t i = 0; i < 3; ++i) cluster()[i].resume();
}

TEST_F(ObserverTest, AWatchdogStoppedByAHoldLimitIsReported) {
  auto client = Client::create(observed(LogLevel::info));
  LockOptions options;
  options.ttl = 600ms;
  options.auto_extend = true;
  options.extend_every = 50ms;
  options.max_extensions = 2;
  auto lock = client->lock("obs:limit", options);
  ASSERT_TRUE(lock);
  ASSERT_TRUE(recorder->wait_for([&] {
    return !recorder->watchdog.empty() && recorder->watchdog.back().first;
  })) << "the watchdog's stop was not reported";
  {
    std::lock_guard guard(recorder->mutex);
    ASSERT_EQ(recorder->watchdog.size(), 3u) << "two extensions, then the stop";
    EXPECT_EQ(recorder->watchdog.back().second, errc::hold_limit_reached);
  }
  EXPECT_TRUE(lines->has(LogLevel::info, "lock \"obs:limit\" no longer extended: max_extensions"));
  EXPECT_FALSE(lines->has(LogLevel::error, "obs:limit")) << "a limit the caller set is no error";
  EXPECT_TRUE(lock->unlock());
}

TEST_F(ObserverTest, ANodeGoingDownAndComingBack) {
  auto client = Client::create(observed(LogLevel::info));
  wait_connected();
  const auto node = cluster()[0].url();
  cluster()[0].kill9();
  // The connection notices the peer's close at once; reconnects then fail until the node
  // is back. A reconnect can also land in the dying process's listen backlog before the
  // kernel has closed it: with no AUTH or SELECT to wait for it is ready at once, and
  // goes down again right after (observer.hpp). So the node is restarted only once a
  // reconnect was refused (the process is gone), and what follows the restart is judged.
  ASSERT_TRUE(recorder->wait_for(
      [&] { return recorder->count(NodeEventKind::connect_failed, node) >= 1; }, 15s))
      << node_events();
  int reconnects_before = 0;
  {
    std::lock_guard guard(recorder->mutex);
    reconnects_before = recorder->count(NodeEventKind::reconnected, node);
  }
  cluster()[0].restart();
  ASSERT_TRUE(recorder->wait_for(
      [&] { return recorder->count(NodeEventKind::reconnected, node) > reconnects_before; }, 15s))
      << node_events();
  const std::string events = node_events();
  {
    std::lock_guard guard(recorder->mutex);
    EXPECT_EQ(recorder->count(NodeEventKind::down), recorder->count(NodeEventKind::down, node))
        << "only the killed node went down\n"
        << events;
    EXPECT_EQ(recorder->count(NodeEventKind::reconnected, node), reconnects_before + 1)
        << "back once after the restart\n"
        << events;
    EXPECT_EQ(recorder->count(NodeEventKind::down, node), reconnects_before + 1)
        << "each time down, then back\n"
        << events;
    EXPECT_EQ(recorder->count(NodeEventKind::reconnected),
              recorder->count(NodeEventKind::reconnected, node))
        << events;
    for (const auto& e : recorder->nodes) {
      if (e.kind == NodeEventKind::down) {
        EXPECT_EQ(e.error, errc::connection_error);
        EXPECT_FALSE(e.detail.empty());
      }
    }
  }
  EXPECT_TRUE(lines->has(LogLevel::warning, "node " + node + " down: "));
  EXPECT_TRUE(lines->has(LogLevel::info, "node " + node + " is back up"));
  EXPECT_FALSE(lines->has(LogLevel::debug, "connected")) << "below the log level";
}

TEST_F(ObserverTest, NoscriptReloadsAreReported) {
  auto client = Client::create(observed());
  ASSERT_TRUE(client->try_lock("obs:script", 1s));  // the scripts are cached on every node
  for (std::size_t i = 0; i < cluster().size(); ++i) cluster()[i].command({"SCRIPT", "FLUSH"});
  ASSERT_TRUE(client->try_lock("obs:script2", 1s));
  ASSERT_TRUE(
      recorder->wait_for([&] { return recorder->count(NodeEventKind::script_reloaded) >= 3; }));
  std::lock_guard guard(recorder->mutex);
  for (const auto& e : recorder->nodes) {
    if (e.kind == NodeEventKind::script_reloaded) {
      EXPECT_FALSE(e.detail.empty());
    }
  }
}

TEST_F(ObserverTest, OverloadRefusalsAreReported) {
  auto o = observed();
  o.max_pending_per_node = 1;
  auto client = Client::create(o);
  wait_connected();
  cluster()[0].pause();  // its first command stays pending; the next is refused
  (void)client->try_lock("obs:overload1", 10s);
  (void)client->try_lock("obs:overload2", 10s);
  ASSERT_TRUE(recorder->wait_for(
      [&] { return recorder->count(NodeEventKind::overloaded, cluster()[0].url()) >= 1; }));
  // (With one pending command per node, a healthy node may refuse too: the release of a
  // failed attempt and the next acquire share a loop turn.)
  EXPECT_TRUE(lines->has(LogLevel::warning, "node " + cluster()[0].url() + " refused a command"));
}

TEST_F(ObserverTest, NoLogSinkNoObserverNoEvents) {
  // The default client says nothing; this one only shows that a sink above the level
  // of every event of a successful lock stays silent.
  auto client = Client::create(observed(LogLevel::warning));
  auto lock = client->try_lock("obs:quiet", 10s);
  ASSERT_TRUE(lock);
  ASSERT_TRUE(lock->unlock());
  std::lock_guard guard(lines->mutex);
  EXPECT_TRUE(lines->lines.empty()) << lines->lines.front().second;
}

}  // namespace
}  // namespace redlock

// Deadlines of the libuv connection against real redis-server processes: a late reply
// fails only its own command and never drops a healthy connection; a stalled loop thread
// reads what arrived before declaring anything late; a node that answers nothing is
// dropped after the dead-node bound, and holds at most max_pending commands meanwhile.

#include <gtest/gtest.h>
#include <uv.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "net/connection.hpp"
#include "scripts/lock_scripts.hpp"
#include "support/connection_harness.hpp"
#include "support/redis_server.hpp"

namespace redlock::net {
namespace {

// The shared harness drives one Connection on a loop of the test thread.
using namespace redlock::test;
using test::RedisServer;
using test::RedisServerOptions;

bool ping(TestLoop& loop, Connection& connection, milliseconds timeout = 2s) {
  const Outcome outcome = run_command(loop, connection, {"PING"}, timeout);
  return outcome.ok() && outcome.str == "PONG";
}

RedisServerOptions with_debug_command() {
  RedisServerOptions options;
  options.extra_args = {"--enable-debug-command", "yes"};
  return options;
}

// A connection that answered one PING, so that the test starts from a ready state.
ConnectionPtr open_ready(TestLoop& loop, const RedisServer& server,
                         const std::function<void(ConnectionOptions&)>& tweak = {}) {
  auto connection = open(loop.get(), server.url(), tweak);
  EXPECT_TRUE(ping(loop, *connection));
  return connection;
}

bool all_done(const std::vector<Outcome>& outcomes) {
  for (const Outcome& outcome : outcomes) {
    if (!outcome.done()) return false;
  }
  return true;
}

TEST(ConnectionDeadline, SlowCommandTimesOutAloneAndTheNextGetsItsOwnReply) {
  RedisServer server(with_debug_command());
  TestLoop loop;
  auto connection = open_ready(loop, server);

  Outcome slow;
  const auto start = Clock::now();
  send(*connection, {"DEBUG", "SLEEP", "0.3"}, 100ms, record(slow));
  ASSERT_TRUE(loop.run_until([&] { return slow.done(); }));
  EXPECT_EQ(slow.error, make_error_code(errc::timeout)) << slow.detail;
  expect_contains(slow.detail,
                  "127.0.0.1:" + std::to_string(server.port()) + ": no reply within 100 ms");
  EXPECT_GE(elapsed_ms(start, slow.at), 100);
  EXPECT_EQ(connection->state(), ConnectionState::ready);
  EXPECT_EQ(connection->stats().disconnects, 0u);
  EXPECT_EQ(connection->pending(), 1u) << "the abandoned command still awaits its reply";

  // Sent while the node still sleeps: the +OK that comes first is DEBUG's, not this one's.
  Outcome next;
  send(*connection, {"ECHO", "next"}, 2s, record(next));
  ASSERT_TRUE(loop.run_until([&] { return next.done(); }));
  EXPECT_TRUE(next.ok()) << next.detail;
  EXPECT_EQ(next.str, "next");
  EXPECT_EQ(connection->stats().late_replies, 1u);
  EXPECT_EQ(connection->stats().disconnects, 0u);
  EXPECT_EQ(connection->stats().connects, 1u);
  EXPECT_EQ(connection->pending(), 0u);
  EXPECT_EQ(slow.calls, 1);
}

TEST(ConnectionDeadline, AbandonedAndLiveCommandsInterleavedKeepPipelineOrder) {
  RedisServer server(with_debug_command());
  TestLoop loop;
  auto connection = open_ready(loop, server);

  std::vector<Outcome> outcomes(5);
  send(*connection, {"DEBUG", "SLEEP", "0.3"}, 100ms, record(outcomes[0]));
  send(*connection, {"ECHO", "a"}, 100ms, record(outcomes[1]));
  send(*connection, {"ECHO", "b"}, 3s, record(outcomes[2]));
  send(*connection, {"ECHO", "c"}, 100ms, record(outcomes[3]));
  send(*connection, {"ECHO", "d"}, 3s, record(outcomes[4]));
  ASSERT_TRUE(loop.run_until([&] { return all_done(outcomes); }));
  for (int i : {0, 1, 3}) {
    EXPECT_EQ(outcomes[i].error, make_error_code(errc::timeout)) << i << ": " << outcomes[i].detail;
  }
  EXPECT_TRUE(outcomes[2].ok()) << outcomes[2].detail;
  EXPECT_EQ(outcomes[2].str, "b");
  EXPECT_TRUE(outcomes[4].ok()) << outcomes[4].detail;
  EXPECT_EQ(outcomes[4].str, "d");
  EXPECT_EQ(connection->stats().late_replies, 3u);
  EXPECT_EQ(connection->stats().disconnects, 0u);
  for (const Outcome& outcome : outcomes) EXPECT_EQ(outcome.calls, 1);
}

// Sleeps on the loop thread once, right after the connection wrote its pipeline and
// before the loop read the replies: what a client pause or CPU starvation does. A
// started idle handle makes that iteration's poll return at once, so the check phase
// stalls before the replies are read (if they were already, nothing stalls).
class LoopStall {
 public:
  LoopStall(uv_loop_t* loop, const Connection& connection, std::chrono::milliseconds length,
            const std::vector<Outcome>& outcomes)
      : loop_(loop), connection_(connection), length_(length), outcomes_(outcomes) {
    uv_idle_init(loop, &idle_);
    uv_check_init(loop, &check_);
    check_.data = this;
    writes_before_ = connection.stats().writes;
    uv_idle_start(&idle_, [](uv_idle_t*) {});
    uv_check_start(&check_, &on_check);
  }
  // The handles are members, so libuv must be done with them before they go away.
  ~LoopStall() {
    idle_.data = &closed_;
    check_.data = &closed_;
    auto on_closed = [](uv_handle_t* handle) { ++*static_cast<int*>(handle->data); };
    uv_close(reinterpret_cast<uv_handle_t*>(&idle_), on_closed);
    uv_close(reinterpret_cast<uv_handle_t*>(&check_), on_closed);
    while (closed_ < 2) uv_run(loop_, UV_RUN_NOWAIT);
  }
  LoopStall(const LoopStall&) = delete;
  LoopStall& operator=(const LoopStall&) = delete;

  /// True when the stall happened with every command written and none answered.
  bool stalled_before_replies() const { return stalled_; }

 private:
  static void on_check(uv_check_t* check) {
    auto* self = static_cast<LoopStall*>(check->data);
    if (self->connection_.stats().writes == self->writes_before_) return;
    uv_idle_stop(&self->idle_);
    uv_check_stop(check);
    for (const Outcome& outcome : self->outcomes_) {
      if (outcome.done()) return;
    }
    std::this_thread::sleep_for(self->length_);
    self->stalled_ = true;
  }

  uv_loop_t* loop_;
  const Connection& connection_;
  std::chrono::milliseconds length_;
  const std::vector<Outcome>& outcomes_;
  std::uint64_t writes_before_ = 0;
  bool stalled_ = false;
  int closed_ = 0;
  uv_idle_t idle_{};
  uv_check_t check_{};
};

TEST(ConnectionDeadline, StalledLoopReadsRepliesBeforeDecidingExpiry) {
  RedisServer server(with_debug_command());
  TestLoop loop;
  auto connection = open_ready(loop, server);
  constexpr auto timeout = 100ms;

  bool stalled = false;
  // Retried in case the node answered before the stall began.
  for (int attempt = 0; attempt < 5 && !stalled; ++attempt) {
    std::vector<Outcome> outcomes(20);
    // A node on loopback can answer within the microseconds between the write and the
    // poll; a 10 ms pause, still far within the timeout, makes it answer during the stall.
    send(*connection, {"DEBUG", "SLEEP", "0.01"}, timeout, record(outcomes[0]));
    for (std::size_t i = 1; i < outcomes.size(); ++i) {
      send(*connection, {"ECHO", std::to_string(i)}, timeout, record(outcomes[i]));
    }
    {
      LoopStall stall(loop.get(), *connection, 3 * timeout, outcomes);
      ASSERT_TRUE(loop.run_until([&] { return all_done(outcomes); }));
      stalled = stall.stalled_before_replies();
    }
    EXPECT_TRUE(outcomes[0].ok()) << outcomes[0].detail;
    for (std::size_t i = 1; i < outcomes.size(); ++i) {
      EXPECT_TRUE(outcomes[i].ok()) << i << ": " << outcomes[i].detail;
      EXPECT_EQ(outcomes[i].str, std::to_string(i));
    }
  }
  EXPECT_TRUE(stalled) << "the node always answered before the loop stalled";
  EXPECT_EQ(connection->stats().disconnects, 0u);
  EXPECT_EQ(connection->stats().late_replies, 0u);
  EXPECT_EQ(connection->stats().connects, 1u);
}

TEST(ConnectionDeadline, SilentNodeTimesOutAtDeadlineAndIsDroppedAfterTheDeadNodeBound) {
  RedisServer server;
  TestLoop loop;
  auto connection = open_ready(loop, server);

  server.pause();
  Outcome late, patient;
  const auto start = Clock::now();
  // Bound: max(1 s, 10 x 150 ms) = 1.5 s past the 150 ms deadline.
  send(*connection, {"PING"}, 150ms, record(late));
  send(*connection, {"PING"}, 8s, record(patient));
  ASSERT_TRUE(loop.run_until([&] { return late.done(); }));
  EXPECT_EQ(late.error, make_error_code(errc::timeout)) << late.detail;
  EXPECT_GE(elapsed_ms(start, late.at), 150);
  EXPECT_LT(elapsed_ms(start, late.at), 1500);
  EXPECT_EQ(connection->stats().disconnects, 0u);
  EXPECT_FALSE(patient.done());

  ASSERT_TRUE(loop.run_until([&] { return connection->stats().disconnects >= 1; }));
  const auto dropped = Clock::now();
  EXPECT_GE(elapsed_ms(start, dropped), 1650);
  EXPECT_LT(elapsed_ms(start, dropped), 6000);
  ASSERT_TRUE(patient.done());
  EXPECT_EQ(patient.error, make_error_code(errc::connection_error));
  expect_contains(patient.detail,
                  "127.0.0.1:" + std::to_string(server.port()) +
                      ": connection dropped: a command got no reply within 1650 ms");
  EXPECT_EQ(late.calls, 1);
  EXPECT_EQ(patient.calls, 1);

  server.resume();
  const auto give_up = Clock::now() + long_wait;
  while (Clock::now() < give_up && !ping(loop, *connection, 1s)) loop.run_for(20ms);
  EXPECT_EQ(connection->state(), ConnectionState::ready);
}

TEST(ConnectionDeadline, DeadNodeBoundIsConfigurable) {
  RedisServer server;
  TestLoop loop;
  auto connection = open_ready(loop, server, [](ConnectionOptions& o) {
    o.dead_node_min = 200ms;
    o.dead_node_factor = 2;
  });
  server.pause();
  Outcome late;
  const auto start = Clock::now();
  send(*connection, {"PING"}, 50ms, record(late));  // bound: max(200 ms, 100 ms)
  ASSERT_TRUE(loop.run_until([&] { return connection->stats().disconnects >= 1; }));
  EXPECT_GE(elapsed_ms(start, Clock::now()), 250);
  EXPECT_EQ(late.error, make_error_code(errc::timeout));
  EXPECT_EQ(late.calls, 1);
  server.resume();
}

TEST(ConnectionDeadline, AbandonedCommandsCountTowardsMaxPending) {
  RedisServer server;
  TestLoop loop;
  auto connection = open_ready(loop, server, [](ConnectionOptions& o) { o.max_pending = 5; });
  server.pause();
  std::vector<Outcome> late(5);
  for (auto& outcome : late) send(*connection, {"PING"}, 100ms, record(outcome));
  ASSERT_TRUE(loop.run_until([&] { return all_done(late); }));
  for (const Outcome& outcome : late) EXPECT_EQ(outcome.error, make_error_code(errc::timeout));
  EXPECT_EQ(connection->pending(), 5u);

  std::vector<Outcome> refused(3);
  for (auto& outcome : refused) send(*connection, {"PING"}, 2s, record(outcome));
  ASSERT_TRUE(loop.run_until([&] { return all_done(refused); }));
  for (const Outcome& outcome : refused) {
    EXPECT_EQ(outcome.error, make_error_code(errc::overloaded)) << outcome.detail;
    expect_contains(outcome.detail, "5 commands already pending");
  }
  EXPECT_EQ(connection->stats().disconnects, 0u);

  server.resume();
  ASSERT_TRUE(loop.run_until([&] { return connection->pending() == 0; }));
  EXPECT_EQ(connection->stats().late_replies, 5u);
  EXPECT_TRUE(ping(loop, *connection));
  EXPECT_EQ(connection->stats().disconnects, 0u);
}

TEST(ConnectionDeadline, LateNoscriptIsDiscardedNotResent) {
  RedisServer server;
  TestLoop loop;
  auto connection = open_ready(loop, server);
  const scripts::Script& inspect = scripts::inspect();
  std::vector<std::string_view> keys{"res"};
  // Sent once (its first use is an EVAL), then lost by the server: the next is an
  // EVALSHA, which meets NOSCRIPT.
  Outcome first;
  connection->eval(inspect, keys, {}, 2s, record(first));
  ASSERT_TRUE(loop.run_until([&] { return first.done(); }));
  ASSERT_TRUE(first.ok()) << first.detail;
  ASSERT_FALSE(server.command({"SCRIPT", "FLUSH"}).is_error());
  server.pause();
  Outcome late;
  connection->eval(inspect, keys, {}, 100ms, record(late));
  ASSERT_TRUE(loop.run_until([&] { return late.done(); }));
  EXPECT_EQ(late.error, make_error_code(errc::timeout));
  server.resume();
  ASSERT_TRUE(loop.run_until([&] { return connection->pending() == 0; }));
  EXPECT_TRUE(ping(loop, *connection));
  EXPECT_EQ(connection->stats().late_replies, 1u);
  // An EVAL re-send would have loaded the script.
  EXPECT_EQ(server.command({"SCRIPT", "EXISTS", inspect.sha1}).elements.at(0).integer, 0);
  EXPECT_EQ(late.calls, 1);
}

TEST(ConnectionDeadline, CloseFromATimeoutCallbackAnswersEachCommandOnce) {
  RedisServer server;
  TestLoop loop;
  Connection* connection = open_ready(loop, server).release();
  server.pause();
  Outcome first, second, patient;
  auto close_on_timeout = [&, inner = record(first)](const ReplyView& view) {
    inner(view);
    connection->close();
  };
  send(*connection, {"PING"}, 100ms, std::move(close_on_timeout));
  send(*connection, {"PING"}, 100ms, record(second));
  send(*connection, {"PING"}, 5s, record(patient));
  ASSERT_TRUE(loop.run_until([&] { return first.done() && second.done() && patient.done(); }));
  EXPECT_EQ(first.error, make_error_code(errc::timeout));
  // Usually expired in the same check as the first; on a slow run its deadline may not
  // have passed yet when the first's callback closes the connection.
  EXPECT_TRUE(second.error == make_error_code(errc::timeout) ||
              second.error == make_error_code(errc::cancelled))
      << second.error.message();
  EXPECT_EQ(patient.error, make_error_code(errc::cancelled));
  server.resume();
  loop.run_for(50ms);
  EXPECT_EQ(first.calls, 1);
  EXPECT_EQ(second.calls, 1);
  EXPECT_EQ(patient.calls, 1);
}

}  // namespace
}  // namespace redlock::net

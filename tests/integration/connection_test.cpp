// The libuv connection against real redis-server processes (and a scripted fake peer for
// byte-level faults). Each test runs its own loop on the test thread.

#include "net/connection.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <uv.h>

#include <chrono>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "scripts/lock_scripts.hpp"
#include "support/connection_harness.hpp"
#include "support/fake_resp_server.hpp"
#include "support/redis_server.hpp"

namespace redlock::net {
namespace {

using namespace redlock::test;  // the connection harness: TestLoop, Outcome, record, ...
using test::FakeRespServer;
using test::RedisServer;
using test::RedisServerOptions;

// One PING round trip; true when it got PONG.
bool ping(TestLoop& loop, Connection& connection, milliseconds timeout = 2s) {
  Outcome outcome;
  send(connection, {"PING"}, timeout, record(outcome));
  loop.run_until([&] { return outcome.done(); });
  return outcome.ok() && outcome.str == "PONG";
}

// Retries PING until the connection serves commands again (it may be in backoff).
bool recovers(TestLoop& loop, Connection& connection, milliseconds limit = long_wait) {
  const auto give_up = Clock::now() + limit;
  while (Clock::now() < give_up) {
    if (ping(loop, connection, 1s)) return true;
    loop.run_for(20ms);
  }
  return false;
}

// A loopback port with nothing listening on it.
std::uint16_t closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

TEST(Connection, RoundTrip) {
  RedisServer server;
  TestLoop loop;
  auto connection = open(loop.get(), server.url());
  Outcome set, get;
  send(*connection, {"SET", "key", std::string_view("bin\0ary", 7)}, 2s, record(set));
  send(*connection, {"GET", "key"}, 2s, record(get));
  ASSERT_TRUE(loop.run_until([&] { return get.done(); }));
  EXPECT_TRUE(set.ok()) << set.detail;
  EXPECT_EQ(set.str, "OK");
  EXPECT_TRUE(get.ok()) << get.detail;
  EXPECT_EQ(get.str, std::string("bin\0ary", 7));
  EXPECT_EQ(connection->state(), ConnectionState::ready);
  EXPECT_EQ(connection->stats().connects, 1u);
  EXPECT_EQ(connection->stats().commands, 2u);
  EXPECT_EQ(connection->pending(), 0u);
}

TEST(Connection, ErrorReplyIsRedisError) {
  RedisServer server;
  TestLoop loop;
  auto connection = open(loop.get(), server.url());
  Outcome outcome;
  send(*connection, {"NOSUCHCOMMAND", "x"}, 2s, record(outcome));
  ASSERT_TRUE(loop.run_until([&] { return outcome.done(); }));
  EXPECT_EQ(outcome.error, make_error_code(errc::redis_error));
  EXPECT_EQ(outcome.type, REDIS_REPLY_ERROR);
  expect_contains(outcome.detail, "ERR unknown command");
  EXPECT_TRUE(ping(loop, *connection)) << "an error reply must not break the connection";
}

TEST(Connection, RefusedFailsFastNamingTheNode) {
  const std::uint16_t port = closed_port();
  TestLoop loop;
  const auto start = Clock::now();
  auto connection = open(loop.get(), "redis://127.0.0.1:" + std::to_string(port));
  Outcome outcome;
  send(*connection, {"PING"}, 5s, record(outcome));
  ASSERT_TRUE(loop.run_until([&] { return outcome.done(); }));
  EXPECT_LT(elapsed_ms(start, outcome.at), 500);
  EXPECT_EQ(outcome.calls, 1);
  EXPECT_EQ(outcome.error, make_error_code(errc::connection_error));
  expect_contains(outcome.detail, "connect 127.0.0.1:" + std::to_string(port) +
                                      ": connection refused (ECONNREFUSED)");

  // In backoff, a new command fails at once with the last error, but never inside the
  // call that submitted it.
  if (connection->state() == ConnectionState::backoff) {
    Outcome fast;
    send(*connection, {"PING"}, 5s, record(fast));
    EXPECT_EQ(fast.calls, 0);
    const auto submitted = Clock::now();
    ASSERT_TRUE(loop.run_until([&] { return fast.done(); }));
    EXPECT_LT(elapsed_ms(submitted, fast.at), 500);
    EXPECT_EQ(fast.error, make_error_code(errc::connection_error));
    expect_contains(fast.detail, "ECONNREFUSED");
  }
  EXPECT_EQ(connection->stats().connects, 0u);
}

// The reconnect waits are drawn from the source the connection is given, one draw per
// failure: scripted at 0, a refused node is dialled again at once, over and over;
// scripted at the top of the span, the connection waits the whole span (a minute here)
// after its first failure.
TEST(Connection, ReconnectWaitIsDrawnFromTheGivenRandomSource) {
  const auto url = "redis://127.0.0.1:" + std::to_string(closed_port());
  for (const std::uint64_t scripted : {std::uint64_t{0}, std::uint64_t{60'000}}) {
    TestLoop loop;
    int failures = 0;
    int draws = 0;
    auto connection = open(loop.get(), url, [&](ConnectionOptions& options) {
      options.reconnect_min = 60s;
      options.reconnect_max = 60s;
      options.random = [&draws, scripted] {
        ++draws;
        return scripted;
      };
      options.on_failed = [&failures](std::error_code, std::string_view) { ++failures; };
    });
    if (scripted == 0) {
      EXPECT_TRUE(loop.run_until([&] { return failures >= 5; }, 2s))
          << "a wait of 0 redials at once; failures: " << failures;
    } else {
      loop.run_for(300ms);
      EXPECT_EQ(failures, 1) << "the whole minute is waited after the first failure";
      EXPECT_EQ(connection->state(), ConnectionState::backoff);
    }
    EXPECT_EQ(draws, failures);
  }
}

TEST(Connection, PausedNodeHitsDeadlineWithoutDroppingTheConnection) {
  RedisServer server;
  TestLoop loop;
  auto connection = open(loop.get(), server.url());
  ASSERT_TRUE(ping(loop, *connection));

  server.pause();
  Outcome outcome;
  const auto start = Clock::now();
  send(*connection, {"ECHO", "sent-while-paused"}, 300ms, record(outcome));
  ASSERT_TRUE(loop.run_until([&] { return outcome.done(); }));
  const long long waited = elapsed_ms(start, outcome.at);
  EXPECT_GE(waited, 300);
  EXPECT_LT(waited, 1300);
  EXPECT_EQ(outcome.calls, 1);
  EXPECT_EQ(outcome.error, make_error_code(errc::timeout));
  expect_contains(outcome.detail,
                  "127.0.0.1:" + std::to_string(server.port()) + ": no reply within 300 ms");
  EXPECT_EQ(connection->stats().disconnects, 0u);

  server.resume();
  // The paused node's late answer to the first ECHO is matched to it and discarded: it
  // can never be taken for the answer to a later command.
  Outcome echo;
  send(*connection, {"ECHO", "after-resume"}, 2s, record(echo));
  ASSERT_TRUE(loop.run_until([&] { return echo.done(); }));
  EXPECT_TRUE(echo.ok()) << echo.detail;
  EXPECT_EQ(echo.str, "after-resume");
  EXPECT_EQ(connection->stats().late_replies, 1u);
  EXPECT_EQ(connection->stats().disconnects, 0u);
  EXPECT_EQ(connection->stats().connects, 1u);
  loop.run_for(50ms);
  EXPECT_EQ(outcome.calls, 1);
}

TEST(Connection, TimeoutFailsOnlyTheLateCommand) {
  RedisServer server;
  TestLoop loop;
  auto connection = open(loop.get(), server.url());
  ASSERT_TRUE(ping(loop, *connection));
  server.pause();
  Outcome short_one, long_one;
  send(*connection, {"ECHO", "short"}, 200ms, record(short_one));
  send(*connection, {"ECHO", "long"}, 5s, record(long_one));
  ASSERT_TRUE(loop.run_until([&] { return short_one.done(); }));
  EXPECT_EQ(short_one.error, make_error_code(errc::timeout));
  EXPECT_FALSE(long_one.done()) << long_one.detail;
  server.resume();
  ASSERT_TRUE(loop.run_until([&] { return long_one.done(); }));
  EXPECT_TRUE(long_one.ok()) << long_one.detail;
  EXPECT_EQ(long_one.str, "long");
  loop.run_for(50ms);
  EXPECT_EQ(short_one.calls, 1);
  EXPECT_EQ(long_one.calls, 1);
  EXPECT_EQ(connection->stats().disconnects, 0u);
}

TEST(Connection, GarbageIsProtocolError) {
  TestLoop loop;
  FakeRespServer fake(loop.get(), [](FakeRespServer::Peer& peer, std::string_view) {
    peer.send("hello, I am not Redis\r\n");
  });
  auto connection = open(loop.get(), fake.url());
  Outcome outcome;
  send(*connection, {"PING"}, 2s, record(outcome));
  ASSERT_TRUE(loop.run_until([&] { return outcome.done(); }));
  EXPECT_EQ(outcome.calls, 1);
  EXPECT_EQ(outcome.error, make_error_code(errc::protocol_error));
  expect_contains(outcome.detail, "127.0.0.1:" + std::to_string(fake.port()) + ": protocol error");
  EXPECT_NE(connection->state(), ConnectionState::ready);
}

TEST(Connection, UnsolicitedReplyIsProtocolError) {
  TestLoop loop;
  FakeRespServer fake(loop.get(), [](FakeRespServer::Peer& peer, std::string_view) {
    peer.send("+PONG\r\n+EXTRA\r\n");
  });
  auto connection = open(loop.get(), fake.url());
  Outcome first;
  send(*connection, {"PING"}, 2s, record(first));
  ASSERT_TRUE(loop.run_until([&] { return first.done(); }));
  EXPECT_TRUE(first.ok());
  ASSERT_TRUE(loop.run_until([&] { return connection->stats().disconnects >= 1; }));
}

TEST(Connection, PeerClosingMidReplyIsConnectionError) {
  TestLoop loop;
  FakeRespServer fake(loop.get(), [](FakeRespServer::Peer& peer, std::string_view) {
    peer.send("$10\r\nabc");
    peer.close();
  });
  auto connection = open(loop.get(), fake.url());
  Outcome first, second;
  send(*connection, {"GET", "a"}, 2s, record(first));
  send(*connection, {"GET", "b"}, 2s, record(second));
  ASSERT_TRUE(loop.run_until([&] { return first.done() && second.done(); }));
  EXPECT_EQ(first.calls, 1);
  EXPECT_EQ(second.calls, 1);
  EXPECT_EQ(first.error, make_error_code(errc::connection_error));
  EXPECT_EQ(second.error, make_error_code(errc::connection_error));
  expect_contains(first.detail, "read 127.0.0.1:" + std::to_string(fake.port()));
  expect_contains(first.detail, "in the middle of a reply");
}

TEST(Connection, UnansweredHandshakeHitsConnectTimeout) {
  TestLoop loop;
  FakeRespServer silent(loop.get(), [](FakeRespServer::Peer&, std::string_view) {});
  auto connection = open(loop.get(), "redis://:pw@127.0.0.1:" + std::to_string(silent.port()),
                         [](ConnectionOptions& o) { o.connect_timeout = 200ms; });
  Outcome outcome;
  const auto start = Clock::now();
  send(*connection, {"PING"}, 5s, record(outcome));
  ASSERT_TRUE(loop.run_until([&] { return outcome.done(); }));
  EXPECT_GE(elapsed_ms(start, outcome.at), 190);
  EXPECT_LT(elapsed_ms(start, outcome.at), 1500);
  EXPECT_EQ(outcome.error, make_error_code(errc::connection_error));
  expect_contains(outcome.detail, "no reply to AUTH/SELECT within 200 ms");
}

// A command sent during the first connection waits for it (its own 100 ms would start
// once the connection is up), and the connect deadline bounds that wait: the command
// fails with the connection, not after its own 100 ms.
TEST(Connection, CommandWaitingForTheFirstConnectionWaitsUpToConnectTimeout) {
  TestLoop loop;
  FakeRespServer silent(loop.get(), [](FakeRespServer::Peer&, std::string_view) {});
  auto connection = open(loop.get(), "redis://:pw@127.0.0.1:" + std::to_string(silent.port()),
                         [](ConnectionOptions& o) { o.connect_timeout = 300ms; });
  Outcome outcome;
  const auto start = Clock::now();
  send(*connection, {"PING"}, 100ms, record(outcome));
  ASSERT_TRUE(loop.run_until([&] { return outcome.done(); }));
  EXPECT_GE(elapsed_ms(start, outcome.at), 290);
  EXPECT_LT(elapsed_ms(start, outcome.at), 1500);
  EXPECT_EQ(outcome.error, make_error_code(errc::connection_error));
  expect_contains(outcome.detail, "no reply to AUTH/SELECT within 300 ms");
  EXPECT_EQ(connection->pending(), 0u);
}

TEST(Connection, KilledNodeFailsEachCommandInFlightOnceAndRecoversAfterRestart) {
  RedisServer server;
  TestLoop loop;
  auto connection = open(loop.get(), server.url());
  ASSERT_TRUE(ping(loop, *connection));

  // BLPOP on an empty list blocks: the first one is in flight at Redis, the rest are
  // pipelined behind it.
  std::vector<Outcome> outcomes(20);
  for (auto& outcome : outcomes) send(*connection, {"BLPOP", "never", "0"}, 10s, record(outcome));
  loop.run_for(50ms);
  const auto blocked = Clock::now() + 5s;
  while (server.command({"INFO", "clients"}).str.find("blocked_clients:1") == std::string::npos &&
         Clock::now() < blocked) {
    loop.run_for(10ms);
  }
  EXPECT_EQ(connection->pending(), outcomes.size());

  server.kill9();
  ASSERT_TRUE(loop.run_until([&] {
    for (auto& o : outcomes) {
      if (!o.done()) return false;
    }
    return true;
  }));
  loop.run_for(100ms);
  for (auto& outcome : outcomes) {
    EXPECT_EQ(outcome.calls, 1);
    EXPECT_EQ(outcome.error, make_error_code(errc::connection_error)) << outcome.detail;
    expect_contains(outcome.detail, "127.0.0.1:" + std::to_string(server.port()));
  }
  EXPECT_EQ(connection->pending(), 0u);

  const std::uint16_t port = server.port();
  server.restart();
  EXPECT_EQ(server.port(), port);
  ASSERT_TRUE(recovers(loop, *connection));
  EXPECT_GE(connection->stats().connects, 2u);
}

TEST(Connection, WrongPasswordIsAuthErrorWithRedisText) {
  RedisServer server({.password = "right"});
  TestLoop loop;
  const std::string address = "@127.0.0.1:" + std::to_string(server.port());

  auto wrong = open(loop.get(), "redis://:wrong" + address);
  Outcome outcome;
  send(*wrong, {"PING"}, 2s, record(outcome));
  ASSERT_TRUE(loop.run_until([&] { return outcome.done(); }));
  EXPECT_EQ(outcome.error, make_error_code(errc::auth_error));
  expect_contains(outcome.detail,
                  "AUTH on 127.0.0.1:" + std::to_string(server.port()) + " failed: WRONGPASS");

  auto none = open(loop.get(), server.url());
  Outcome noauth;
  send(*none, {"PING"}, 2s, record(noauth));
  ASSERT_TRUE(loop.run_until([&] { return noauth.done(); }));
  EXPECT_EQ(noauth.error, make_error_code(errc::auth_error));
  expect_contains(noauth.detail, "NOAUTH");

  auto right = open(loop.get(), "redis://:right" + address);
  EXPECT_TRUE(ping(loop, *right));
}

TEST(Connection, WrongAclUserIsAuthError) {
  RedisServer server;
  ASSERT_FALSE(
      server.command({"ACL", "SETUSER", "locker", "on", ">s3cret", "~*", "+@all"}).is_error());
  TestLoop loop;
  const std::string address = "@127.0.0.1:" + std::to_string(server.port());

  for (const std::string credentials : {"locker:wrong", "nobody:s3cret"}) {
    auto connection = open(loop.get(), "redis://" + credentials + address);
    Outcome outcome;
    send(*connection, {"PING"}, 2s, record(outcome));
    ASSERT_TRUE(loop.run_until([&] { return outcome.done(); }));
    EXPECT_EQ(outcome.error, make_error_code(errc::auth_error)) << credentials;
    expect_contains(outcome.detail, "WRONGPASS");
  }

  auto connection = open(loop.get(), "redis://locker:s3cret" + address);
  Outcome whoami;
  send(*connection, {"ACL", "WHOAMI"}, 2s, record(whoami));
  ASSERT_TRUE(loop.run_until([&] { return whoami.done(); }));
  EXPECT_TRUE(whoami.ok()) << whoami.detail;
  EXPECT_EQ(whoami.str, "locker");
}

TEST(Connection, ScriptSurvivesScriptFlush) {
  RedisServer server;
  TestLoop loop;
  auto connection = open(loop.get(), server.url());
  ASSERT_FALSE(server.command({"SET", "res", "owner-1", "PX", "60000"}).is_error());
  const scripts::Script& inspect = scripts::inspect();
  std::vector<std::string_view> keys{"res"};

  auto run_inspect = [&](Outcome& outcome) {
    connection->eval(inspect, keys, {}, 2s, record(outcome));
    ASSERT_TRUE(loop.run_until([&] { return outcome.done(); }));
    EXPECT_TRUE(outcome.ok()) << outcome.detail;
    EXPECT_EQ(outcome.calls, 1);
    ASSERT_EQ(outcome.elements.size(), 2u);
    EXPECT_EQ(outcome.elements[1], "owner-1");
  };

  Outcome first;  // a fresh server has no scripts: EVALSHA misses, EVAL runs it
  run_inspect(first);
  EXPECT_EQ(server.command({"SCRIPT", "EXISTS", inspect.sha1}).elements.at(0).integer, 1);

  ASSERT_FALSE(server.command({"SCRIPT", "FLUSH"}).is_error());
  Outcome after_flush;
  run_inspect(after_flush);

  Outcome cached;  // now EVALSHA hits
  run_inspect(cached);
}

// A ready connection to a node whose script cache was just flushed. Members are destroyed
// in reverse order: the connection closes before the loop winds down.
class ConnectionAfterScriptFlush : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(ping(loop, *connection));
    ASSERT_FALSE(server.command({"SCRIPT", "FLUSH"}).is_error());
  }

  RedisServer server;
  TestLoop loop;
  ConnectionPtr connection = open(loop.get(), server.url());
};

TEST_F(ConnectionAfterScriptFlush, NoscriptFallbackKeepsPipelineOrderAndCallbacks) {
  std::vector<std::string_view> keys{"nothing-here"};
  Outcome script, after;
  connection->eval(scripts::inspect(), keys, {}, 2s, record(script));
  send(*connection, {"ECHO", "after"}, 2s, record(after));
  ASSERT_TRUE(loop.run_until([&] { return script.done() && after.done(); }));
  EXPECT_TRUE(script.ok()) << script.detail;
  ASSERT_EQ(script.elements.size(), 2u);
  EXPECT_EQ(script.elements[0], "-2");  // PTTL of a missing key
  EXPECT_TRUE(after.ok());
  EXPECT_EQ(after.str, "after");
}

// After SCRIPT FLUSH the acquire's EVALSHA misses while the release script is cached
// (another client loaded it): the release, submitted when the reply before the acquire's
// NOSCRIPT arrives, must still run after the resent acquire, or it deletes nothing and the
// acquire then leaves its value on the node for a whole TTL.
TEST_F(ConnectionAfterScriptFlush, ReleaseQueuedBehindANoscriptAcquireRunsAfterTheResentAcquire) {
  const scripts::Script& release = scripts::release();
  ASSERT_FALSE(server.command({"SCRIPT", "LOAD", std::string(release.source)}).is_error());

  std::vector<std::string_view> keys{"res", "res:fence"};
  std::vector<std::string_view> acquire_args{"owner-1", "60000", "0"};
  std::vector<std::string_view> release_keys{"res"};
  std::vector<std::string_view> release_args{"owner-1"};
  Outcome before, acquired, released;
  // One write: the ECHO's reply and the acquire's NOSCRIPT come back together, and the
  // release is submitted from the ECHO's callback, between the two.
  send(*connection, {"ECHO", "before"}, 2s, [&](const ReplyView& view) {
    record(before)(view);
    connection->eval(release, release_keys, release_args, 2s, record(released));
  });
  connection->eval(scripts::acquire(), keys, acquire_args, 2s, record(acquired));
  ASSERT_TRUE(loop.run_until([&] { return acquired.done() && released.done(); }));
  EXPECT_TRUE(acquired.ok()) << acquired.detail;
  EXPECT_TRUE(released.ok()) << released.detail;
  EXPECT_EQ(released.integer, 1) << "the release ran before the acquire it releases";
  EXPECT_TRUE(server.command({"GET", "res"}).is_nil()) << "the lock was left on the node";
}

TEST(Connection, TenThousandPipelinedCommandsInOrderWithFewWrites) {
  RedisServer server;
  TestLoop loop;
  auto connection =
      open(loop.get(), server.url(), [](ConnectionOptions& o) { o.max_pending = 20'000; });
  ASSERT_TRUE(ping(loop, *connection));
  const auto writes_before = connection->stats().writes;

  constexpr int count = 10'000;
  std::vector<long long> seen;
  seen.reserve(count);
  int failures = 0;
  for (int i = 0; i < count; ++i) {
    send(*connection, {"INCR", "counter"}, 30s, [&](const ReplyView& view) {
      if (view.error || view.reply == nullptr) {
        ++failures;
        return;
      }
      seen.push_back(view.reply->integer);
    });
  }
  EXPECT_EQ(connection->pending(), std::size_t(count));
  ASSERT_TRUE(loop.run_until([&] { return int(seen.size()) + failures == count; }, 30s));
  EXPECT_EQ(failures, 0);
  for (int i = 0; i < int(seen.size()); ++i) {
    if (seen[i] != i + 1) {
      ADD_FAILURE() << "reply " << i << " is " << seen[i];
      break;
    }
  }
  EXPECT_LT(connection->stats().writes - writes_before, 1'000u);
  EXPECT_EQ(server.command({"GET", "counter"}).str, std::to_string(count));
}

TEST(Connection, CommandsFromCallbacksArePipelinedToo) {
  RedisServer server;
  TestLoop loop;
  auto connection = open(loop.get(), server.url());
  ASSERT_TRUE(ping(loop, *connection));
  const auto writes_before = connection->stats().writes;
  // Each reply triggers ten new commands: ten rounds of fan-out, one write per round.
  int completed = 0;
  std::function<void(int)> fan_out = [&](int depth) {
    for (int i = 0; i < 10; ++i) {
      send(*connection, {"PING"}, 5s, [&, depth, i](const ReplyView& view) {
        if (!view.error) ++completed;
        if (i == 0 && depth < 10) fan_out(depth + 1);
      });
    }
  };
  fan_out(1);
  ASSERT_TRUE(loop.run_until([&] { return completed == 100; }));
  EXPECT_LE(connection->stats().writes - writes_before, 20u);
}

TEST(Connection, UnixSocketRoundTrip) {
  RedisServer server({.unix_socket = true});
  TestLoop loop;
  auto connection = open(loop.get(), server.unix_url() + "?db=2");
  Outcome set;
  send(*connection, {"SET", "over-unix", "yes"}, 2s, record(set));
  ASSERT_TRUE(loop.run_until([&] { return set.done(); }));
  EXPECT_TRUE(set.ok()) << set.detail;
  ASSERT_FALSE(server.command({"SELECT", "2"}).is_error());
  EXPECT_EQ(server.command({"GET", "over-unix"}).str, "yes");
}

TEST(Connection, UnixSocketMissingNamesThePath) {
  TestLoop loop;
  auto connection = open(loop.get(), "unix:///tmp/redlock-no-such-dir/redis.sock");
  Outcome outcome;
  send(*connection, {"PING"}, 2s, record(outcome));
  ASSERT_TRUE(loop.run_until([&] { return outcome.done(); }));
  EXPECT_EQ(outcome.error, make_error_code(errc::connection_error));
  expect_contains(outcome.detail, "connect /tmp/redlock-no-such-dir/redis.sock: ");
  expect_contains(outcome.detail, "ENOENT");
}

TEST(Connection, SelectsTheDatabase) {
  RedisServer server;
  TestLoop loop;
  auto connection = open(loop.get(), server.url() + "/3");
  Outcome set;
  send(*connection, {"SET", "in-db-3", "yes"}, 2s, record(set));
  ASSERT_TRUE(loop.run_until([&] { return set.done(); }));
  EXPECT_TRUE(set.ok()) << set.detail;
  EXPECT_TRUE(server.command({"GET", "in-db-3"}).is_nil());
  ASSERT_FALSE(server.command({"SELECT", "3"}).is_error());
  EXPECT_EQ(server.command({"GET", "in-db-3"}).str, "yes");
}

TEST(Connection, SelectOutOfRangeFailsAndNoCommandRuns) {
  RedisServer server;
  TestLoop loop;
  auto connection = open(loop.get(), server.url() + "/99");
  Outcome set;
  send(*connection, {"SET", "must-not-exist", "x"}, 2s, record(set));
  ASSERT_TRUE(loop.run_until([&] { return set.done(); }));
  EXPECT_EQ(set.error, make_error_code(errc::redis_error));
  expect_contains(set.detail, "SELECT 99 on 127.0.0.1:" + std::to_string(server.port()) +
                                  " failed: ERR DB index is out of range");
  loop.run_for(100ms);  // let any reconnect attempt happen: still nothing may run
  EXPECT_EQ(server.command({"DBSIZE"}).integer, 0);
  EXPECT_EQ(connection->stats().connects, 0u);
}

TEST(Connection, QueueBoundIsOverloaded) {
  RedisServer server;
  TestLoop loop;
  auto connection = open(loop.get(), server.url(), [](ConnectionOptions& o) { o.max_pending = 5; });
  std::vector<Outcome> outcomes(8);
  for (auto& outcome : outcomes) send(*connection, {"PING"}, 2s, record(outcome));
  EXPECT_EQ(connection->pending(), 5u);
  for (auto& outcome : outcomes) EXPECT_EQ(outcome.calls, 0) << "failed inside the call";
  ASSERT_TRUE(loop.run_until([&] {
    for (auto& o : outcomes) {
      if (!o.done()) return false;
    }
    return true;
  }));
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(outcomes[i].ok()) << outcomes[i].detail;
  for (int i = 5; i < 8; ++i) {
    EXPECT_EQ(outcomes[i].error, make_error_code(errc::overloaded));
    expect_contains(outcomes[i].detail, "5 commands already pending");
  }
}

TEST(Connection, CloseCancelsEachPendingCommandOnce) {
  RedisServer server;
  TestLoop loop;
  Connection* connection = open(loop.get(), server.url()).release();
  ASSERT_TRUE(ping(loop, *connection));
  server.pause();  // so that in-flight commands stay in flight
  std::vector<Outcome> outcomes(100);
  for (auto& outcome : outcomes) send(*connection, {"PING"}, 10s, record(outcome));
  loop.run_for(20ms);
  // A callback that submits again during close() is answered later, also cancelled.
  Outcome resubmitted;
  send(*connection, {"PING"}, 10s, [&](const ReplyView& view) {
    EXPECT_EQ(view.error, make_error_code(errc::cancelled));
    send(*connection, {"PING"}, 10s, record(resubmitted));
  });
  connection->close();
  for (auto& outcome : outcomes) {
    EXPECT_EQ(outcome.calls, 1);
    EXPECT_EQ(outcome.error, make_error_code(errc::cancelled));
  }
  EXPECT_EQ(resubmitted.calls, 0);
  connection->close();  // idempotent
  loop.run_for(50ms);   // the connection frees itself once its handles closed
  EXPECT_EQ(resubmitted.calls, 1);
  EXPECT_EQ(resubmitted.error, make_error_code(errc::cancelled));
  for (auto& outcome : outcomes) EXPECT_EQ(outcome.calls, 1);
  server.resume();
}

TEST(Connection, CloseFromInsideACallback) {
  RedisServer server;
  TestLoop loop;
  Connection* connection = open(loop.get(), server.url()).release();
  Outcome second;
  int first_calls = 0;
  send(*connection, {"PING"}, 2s, [&](const ReplyView&) {
    ++first_calls;
    connection->close();
  });
  send(*connection, {"PING"}, 2s, record(second));
  ASSERT_TRUE(loop.run_until([&] { return second.done(); }));
  EXPECT_EQ(first_calls, 1);
  EXPECT_EQ(second.calls, 1);
  loop.run_for(20ms);
  EXPECT_EQ(second.calls, 1);
}

TEST(Connection, HostNameIsResolved) {
  RedisServer server;
  TestLoop loop;
  // "localhost" may resolve to ::1 first, where nothing listens: every address is tried.
  auto connection = open(loop.get(), "redis://localhost:" + std::to_string(server.port()));
  EXPECT_TRUE(ping(loop, *connection));
}

TEST(Connection, UnknownHostNamesTheNode) {
  // A DNS label holds at most 63 bytes, so the resolver refuses this name without sending
  // a query: it fails on any machine and nothing leaves loopback (a name under .invalid
  // alone would be sent to the configured name server).
  std::string host = "no-such-host-";
  host.resize(64, 'x');
  host += ".invalid";
  TestLoop loop;
  auto connection = open(loop.get(), "redis://" + host + ":1");
  Outcome outcome;
  send(*connection, {"PING"}, 5s, record(outcome));
  ASSERT_TRUE(loop.run_until([&] { return outcome.done(); }));
  EXPECT_EQ(outcome.error, make_error_code(errc::connection_error));
  expect_contains(outcome.detail, "resolve " + host + ":1");
}

TEST(Connection, NonPositiveTimeoutFailsLater) {
  RedisServer server;
  TestLoop loop;
  auto connection = open(loop.get(), server.url());
  Outcome outcome;
  send(*connection, {"PING"}, 0ms, record(outcome));
  EXPECT_EQ(outcome.calls, 0);
  ASSERT_TRUE(loop.run_until([&] { return outcome.done(); }));
  EXPECT_EQ(outcome.error, make_error_code(errc::timeout));
}

}  // namespace
}  // namespace redlock::net

// redlock::testing, the installed fault kit: each verb's effect as a plain Redis client
// sees it, through the proxy and past it, on each kind of member, and the fleet's clean-up.

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

#include <redlock/testing.hpp>

namespace redlock::testing {
namespace {

using namespace std::chrono_literals;

// The reply to one command on a new connection to 127.0.0.1:`port`, or nullopt when none
// came within `timeout`.
std::optional<std::string> ask(std::uint16_t port, const std::string& command,
                               std::chrono::milliseconds timeout = 1s) {
  const timeval tv{static_cast<time_t>(timeout.count() / 1000),
                   static_cast<suseconds_t>(timeout.count() % 1000 * 1000)};
  redisContext* context = redisConnectWithTimeout("127.0.0.1", port, tv);
  if (context == nullptr || context->err) {
    if (context) redisFree(context);
    return std::nullopt;
  }
  redisSetTimeout(context, tv);
  auto* reply = static_cast<redisReply*>(redisCommand(context, command.c_str()));
  std::optional<std::string> out;
  if (reply) {
    out = reply->type == REDIS_REPLY_NIL ? "(nil)" : std::string(reply->str ? reply->str : "");
    freeReplyObject(reply);
  }
  redisFree(context);
  return out;
}

TEST(TestingKit, StartsMembersBehindProxiesAndRemovesEverything) {
  std::string dir;
  std::vector<pid_t> pids;
  {
    Fleet fleet({.masters = 3});
    ASSERT_EQ(fleet.size(), 3u);
    dir = fleet.dir();
    const auto urls = fleet.urls();
    for (std::size_t i = 0; i < fleet.size(); ++i) {
      EXPECT_EQ(fleet[i].index(), i);
      EXPECT_NE(fleet[i].proxy_port(), fleet[i].port());
      EXPECT_EQ(urls[i], "redis://127.0.0.1:" + std::to_string(fleet[i].proxy_port()));
      EXPECT_EQ(ask(fleet[i].proxy_port(), "PING"), "PONG");
      EXPECT_EQ(ask(fleet[i].port(), "PING"), "PONG");
      pids.push_back(fleet[i].pid());
    }
    EXPECT_TRUE(std::filesystem::is_directory(dir));
  }
  EXPECT_FALSE(std::filesystem::exists(dir));
  for (pid_t pid : pids) EXPECT_NE(::kill(pid, 0), 0) << "pid " << pid << " still runs";
}

TEST(TestingKit, PauseSilencesAMemberUntilResumed) {
  Fleet fleet({.masters = 1});
  fleet[0].pause();
  EXPECT_TRUE(fleet[0].paused());
  EXPECT_EQ(ask(fleet[0].port(), "PING", 300ms), std::nullopt);
  fleet[0].resume();
  EXPECT_FALSE(fleet[0].paused());
  EXPECT_EQ(ask(fleet[0].port(), "PING"), "PONG");
}

TEST(TestingKit, KillAndRestartOnTheSamePortWithOrWithoutData) {
  Fleet fleet({.masters = 1, .persistence = true});
  Member& member = fleet[0];
  const auto port = member.port();
  EXPECT_EQ(ask(port, "SET k v"), "OK");

  member.kill();
  EXPECT_FALSE(member.running());
  EXPECT_EQ(member.pid(), -1);
  EXPECT_EQ(ask(port, "PING"), std::nullopt);

  member.restart({.persistence = true});
  EXPECT_TRUE(member.running());
  EXPECT_EQ(member.port(), port);
  EXPECT_EQ(ask(port, "GET k"), "v");  // fsync'd before the kill

  member.restart({.persistence = false});
  EXPECT_EQ(member.port(), port);
  EXPECT_EQ(ask(port, "GET k"), "(nil)");
}

TEST(TestingKit, RestartWithDataNeedsPersistence) {
  Fleet fleet({.masters = 1});
  EXPECT_THROW(fleet[0].restart({.persistence = true}), std::invalid_argument);
  EXPECT_TRUE(fleet[0].running());
}

TEST(TestingKit, CutAndSlowActOnTheProxyOnly) {
  Fleet fleet({.masters = 1});
  Member& member = fleet[0];
  member.cut();
  EXPECT_EQ(ask(member.proxy_port(), "PING", 300ms), std::nullopt);
  EXPECT_EQ(ask(member.port(), "PING"), "PONG");  // the server itself is fine
  member.heal();
  EXPECT_EQ(ask(member.proxy_port(), "PING"), "PONG");

  member.slow(150ms);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(ask(member.proxy_port(), "SET slow 1"), "OK");
  EXPECT_GE(std::chrono::steady_clock::now() - start, 150ms);
  EXPECT_EQ(ask(member.port(), "GET slow"), "1");
  member.heal();
}

TEST(TestingKit, HealAllUndoesEveryFault) {
  Fleet fleet({.masters = 3});
  fleet[0].pause();
  fleet[1].kill();
  fleet[2].cut();
  fleet.heal_all();
  for (std::size_t i = 0; i < fleet.size(); ++i) {
    EXPECT_TRUE(eventually([&] { return ask(fleet[i].proxy_port(), "PING") == "PONG"; }))
        << "member " << i;
  }
}

TEST(TestingKit, WithoutProxiesUrlsNameTheServersAndNetworkFaultsThrow) {
  Fleet fleet({.masters = 2, .proxies = false});
  EXPECT_EQ(fleet[1].proxy_port(), 0);
  EXPECT_EQ(fleet.urls()[1], fleet[1].direct_url());
  EXPECT_THROW(fleet[0].cut(), std::logic_error);
  EXPECT_THROW(fleet[0].slow(10ms), std::logic_error);
}

TEST(TestingKit, AMissingServerIsAClearError) {
  const char* saved = std::getenv("REDLOCK_REDIS_SERVER");
  const std::string previous = saved ? saved : "";
  ::setenv("REDLOCK_REDIS_SERVER", "/nonexistent/redis-server", 1);
  try {
    Fleet fleet({.masters = 1});
    ADD_FAILURE() << "a fleet started without its redis-server";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("REDLOCK_REDIS_SERVER"), std::string::npos) << e.what();
  }
  if (saved) {
    ::setenv("REDLOCK_REDIS_SERVER", previous.c_str(), 1);
  } else {
    ::unsetenv("REDLOCK_REDIS_SERVER");
  }
}

// TIME of the server on `port`, in ms since the epoch, less the real time now.
long long clock_ahead_ms(std::uint16_t port) {
  redisContext* context = redisConnectWithTimeout("127.0.0.1", port, timeval{1, 0});
  if (context == nullptr || context->err) {
    if (context) redisFree(context);
    return -1'000'000'000;
  }
  auto* reply = static_cast<redisReply*>(redisCommand(context, "TIME"));
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  long long ahead = -1'000'000'000;
  if (reply && reply->type == REDIS_REPLY_ARRAY && reply->elements == 2) {
    ahead =
        std::stoll(reply->element[0]->str) * 1000 + std::stoll(reply->element[1]->str) / 1000 - now;
  }
  if (reply) freeReplyObject(reply);
  redisFree(context);
  return ahead;
}

TEST(TestingKit, SetClockMovesTimeUntilSetBackAndSurvivesARestart) {
  Fleet fleet({.masters = 2, .fake_clock = true});
  fleet[0].set_clock(1h);
  EXPECT_NEAR(clock_ahead_ms(fleet[0].port()), 3'600'000, 2'000);
  EXPECT_NEAR(clock_ahead_ms(fleet[1].port()), 0, 2'000);
  fleet[0].restart();
  EXPECT_NEAR(clock_ahead_ms(fleet[0].port()), 3'600'000, 2'000);
  // A rate runs the clock on from its reading; 0 ms is the real time again afterwards.
  fleet[0].set_clock(0ms, 50.0);
  std::this_thread::sleep_for(100ms);
  EXPECT_GE(clock_ahead_ms(fleet[0].port()), 2'000);
  fleet[0].set_clock(0ms);
  EXPECT_NEAR(clock_ahead_ms(fleet[0].port()), 0, 2'000);
  EXPECT_THROW(fleet[0].set_clock(0ms, 0.0), std::invalid_argument);
  fleet[1].set_clock(-30s);
  fleet.heal_all();
  EXPECT_NEAR(clock_ahead_ms(fleet[1].port()), 0, 2'000);
}

// The library takes a new clock from when it notices the file, which may be long after
// the kit wrote it: here a paused server notices a fast clock 300 ms late, so its clock
// has run 300 ms x 49 less far than the kit would reckon from the write alone.
TEST(TestingKit, AClockSetWhilePausedIsSetBackToTheRealTimeExactly) {
  Fleet fleet({.masters = 1, .fake_clock = true});
  fleet[0].pause();
  fleet[0].set_clock(0ms, 50.0);
  std::this_thread::sleep_for(300ms);
  fleet[0].resume();
  std::this_thread::sleep_for(100ms);
  fleet[0].set_clock(0ms);
  EXPECT_NEAR(clock_ahead_ms(fleet[0].port()), 0, 200);
  fleet[0].set_clock(10s);
  EXPECT_NEAR(clock_ahead_ms(fleet[0].port()), 10'000, 200);
}

TEST(TestingKit, VerbsAMemberCannotDoAreLogicErrorsNamingIt) {
  Fleet fleet({.masters = 1});
  EXPECT_EQ(fleet[0].kind(), MemberKind::standalone);
  try {
    fleet[0].fail_over();
    ADD_FAILURE() << "a standalone member failed over";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("member 0"), std::string::npos) << e.what();
  }
  EXPECT_THROW(fleet[0].set_clock(1s), std::logic_error);  // no FleetOptions::fake_clock
}

TEST(TestingKit, ASentinelMemberFailsOverAndItsMasterIsPausedAndKilled) {
  Fleet fleet({.members = {{.kind = MemberKind::sentinel, .replicas = 1, .down_after = 5s}}});
  Member& group = fleet[0];
  EXPECT_EQ(group.kind(), MemberKind::sentinel);
  EXPECT_EQ(group.url().rfind("redis-sentinel://127.0.0.1:", 0), 0u) << group.url();
  EXPECT_EQ(group.url().substr(group.url().size() - 8), "/redlock");
  EXPECT_EQ(group.proxy_port(), 0);
  EXPECT_THROW(group.cut(), std::logic_error);
  EXPECT_THROW(group.slow(1ms), std::logic_error);
  EXPECT_THROW(group.set_clock(1s), std::logic_error);

  const std::uint16_t before = group.port();
  EXPECT_EQ(ask(before, "SET k v"), "OK");
  group.fail_over();
  const std::uint16_t after = group.port();
  EXPECT_NE(after, before);
  EXPECT_EQ(ask(after, "SET k w"), "OK");  // the new master accepts writes

  group.pause();
  EXPECT_TRUE(group.paused());
  EXPECT_EQ(ask(after, "PING", 200ms), std::nullopt);
  group.resume();
  EXPECT_EQ(ask(after, "PING"), "PONG");

  group.kill();
  EXPECT_FALSE(group.running());
  group.restart();
  EXPECT_TRUE(group.running());
}

TEST(TestingKit, AClusterMemberFailsOverEveryShardAndGoesDownAsAWhole) {
  Fleet fleet({.members = {{.kind = MemberKind::cluster, .replicas = 1, .shards = 3}}});
  Member& cluster = fleet[0];
  EXPECT_EQ(cluster.kind(), MemberKind::cluster);
  EXPECT_EQ(cluster.url().rfind("redis-cluster://127.0.0.1:", 0), 0u) << cluster.url();
  EXPECT_EQ(cluster.pid(), -1);
  EXPECT_THROW(cluster.reset_connections(), std::logic_error);
  cluster.fail_over();
  cluster.kill();
  EXPECT_FALSE(cluster.running());
  cluster.restart();
  EXPECT_TRUE(cluster.running());
  EXPECT_EQ(ask(cluster.port(), "CLUSTER INFO").value_or("").find("cluster_state:ok"), 0u);
}

TEST(TestingKit, EventuallyPollsUntilTrueOrTimeout) {
  int calls = 0;
  EXPECT_TRUE(eventually([&] { return ++calls == 3; }, 1s, 1ms));
  EXPECT_FALSE(eventually([] { return false; }, 20ms, 1ms));
}

}  // namespace
}  // namespace redlock::testing

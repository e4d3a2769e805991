// The fixture itself: pause, kill, restart on the same port, AOF, passwords, unix
// sockets, and a clear failure for a server that cannot start.

#include "support/redis_server.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <chrono>

namespace redlock::test {
namespace {

using namespace std::chrono_literals;

TEST(RedisServer, PauseKillRestartOnTheSamePort) {
  RedisServer server;
  EXPECT_TRUE(server.command({"PING"}).is_status("PONG"));
  EXPECT_TRUE(server.command({"SET", "a", "1"}).is_status("OK"));

  const auto paused_at = std::chrono::steady_clock::now();
  server.pause();
  EXPECT_TRUE(server.paused());
  EXPECT_THROW(server.command({"GET", "a"}), std::runtime_error);  // 2 s client timeout
  EXPECT_GE(std::chrono::steady_clock::now() - paused_at, 1900ms);
  server.resume();
  EXPECT_EQ(server.command({"GET", "a"}).str, "1");

  const auto port = server.port();
  server.kill9();
  EXPECT_FALSE(server.running());
  EXPECT_THROW(server.command({"PING"}), std::runtime_error);
  server.restart();
  EXPECT_TRUE(server.running());
  EXPECT_EQ(server.port(), port);
  EXPECT_TRUE(server.command({"GET", "a"}).is_nil());  // no persistence by default
  EXPECT_TRUE(server.command({"NOSUCHCOMMAND"}).is_error());
}

TEST(RedisServer, AppendOnlyPasswordAndUnixSocket) {
  RedisServer server({.appendonly_always = true, .password = "p@ss w", .unix_socket = true});
  EXPECT_TRUE(server.command({"SET", "a", "1"}).is_status("OK"));
  server.kill9();
  server.restart();
  EXPECT_EQ(server.command({"GET", "a"}).str, "1");  // fsync'd before the kill

  ASSERT_FALSE(server.unix_path().empty());
  redisContext* context = redisConnectUnix(server.unix_path().c_str());
  ASSERT_TRUE(context && !context->err);
  auto* reply = static_cast<redisReply*>(redisCommand(context, "PING"));
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->type, REDIS_REPLY_ERROR);  // NOAUTH: requirepass applies there too
  freeReplyObject(reply);
  redisFree(context);
  EXPECT_EQ(server.url_with_password(),
            "redis://:p%40ss%20w@127.0.0.1:" + std::to_string(server.port()));
}

TEST(RedisCluster, HealsPausedAndKilledNodes) {
  RedisCluster cluster(5);
  ASSERT_EQ(cluster.urls().size(), 5u);
  cluster[1].pause();
  cluster[2].kill9();
  cluster.resume_all_and_restart_dead();
  cluster.flushall();
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_TRUE(cluster[i].command({"PING"}).is_status("PONG")) << i;
  }
}

TEST(RedisServer, StartFailureCarriesTheLog) {
  try {
    RedisServer server({.extra_args = {"--no-such-option", "1"}});
    FAIL() << "started with a bad option";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("no-such-option"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace redlock::test

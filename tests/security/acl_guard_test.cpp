// The member guard (Options::member_guard) run as the ACL user of docs/security.md, on
// five real nodes: with the documented rule a member restarted without persistence is
// guarded as it is for an unrestricted user; with a rule that forgets +info the server
// refuses every INFO, and the client still takes each reconnect for a restart, and says
// once that the rule is wrong.

#include <gtest/gtest.h>

#include <chrono>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>
#include <redlock/testing/eventually.hpp>

#include "lock_user_rule.hpp"
#include "support/redis_server.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using test::RedisCluster;
using test::RedisServerOptions;

RedisServerOptions nodes_with(std::vector<std::string> rule) {
  RedisServerOptions options;
  options.extra_args = std::move(rule);
  return options;
}

// Counts each node's misconfigured events and keeps their details.
struct Misconfigured : Observer {
  std::mutex mutex;
  std::map<std::string, std::vector<std::string>> seen;
  void on_node(const NodeEvent& event) override {
    if (event.kind != NodeEventKind::misconfigured) return;
    std::lock_guard<std::mutex> hold(mutex);
    seen[std::string(event.node)].emplace_back(event.detail);
  }
};

Options locker_options(RedisCluster& cluster) {
  Options options;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    options.nodes.push_back("redis://" + security_test::lock_user + ":" +
                            security_test::lock_user_password +
                            "@127.0.0.1:" + std::to_string(cluster[i].port()));
  }
  options.node_timeout = 500ms;
  options.reconnect_min = 5ms;
  options.reconnect_max = 50ms;
  options.member_guard.longest_ttl = 10s;
  return options;
}

// The kit's, with the 10 s a guard on a loaded machine may take.
bool eventually(const std::function<bool()>& check, std::chrono::milliseconds limit = 10s) {
  return redlock::testing::eventually(check, limit, 5ms);
}

// Every node answered an inspect: each connection's INFO was answered (or refused) before.
// The lock user may not run the inspect script (it reads any kind of lock), so a refusal
// of it is an answer too.
void meet(Client& client) {
  ASSERT_TRUE(eventually([&] {
    auto views = client.inspect("lock:meet");
    if (!views) return false;
    for (const auto& view : *views) {
      const auto status = view.outcome.status;
      if (status != NodeStatus::redis_error && view.outcome.error) return false;
      if (status == NodeStatus::pending) return false;
    }
    return true;
  }));
}

bool guards(Client& client, std::initializer_list<std::size_t> nodes) {
  return eventually([&] {
    auto views = client.inspect("lock:learn");
    if (!views) return false;
    for (auto node : nodes) {
      if ((*views)[node].guard.find("guarded for another") == std::string::npos) return false;
    }
    return true;
  });
}

// A holder takes lock:held on all five; nodes 0-2 restart empty. A contender connected
// all along must not take the key on their grants: it is refused, "guarded", naming
// `cause`.
void expect_restart_guarded(RedisCluster& cluster, Client& contender, const std::string& cause) {
  auto holder = Client::create(locker_options(cluster));
  meet(contender);
  auto held = holder->lock("lock:held", {.ttl = 10s});
  ASSERT_TRUE(held) << held.error().message();
  ASSERT_TRUE(eventually([&] {
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      if (cluster[i].command({"EXISTS", "lock:held"}).integer != 1) return false;
    }
    return true;
  }));
  for (std::size_t node : {0, 1, 2}) cluster[node].kill9();
  for (std::size_t node : {0, 1, 2}) cluster[node].restart();
  ASSERT_TRUE(cluster[0].command({"GET", "lock:held"}).is_nil()) << "the restart kept the key";
  EXPECT_TRUE(guards(contender, {0, 1, 2})) << "the reconnects were not taken for restarts";
  auto during = contender.lock("lock:held", {.ttl = 10s, .wait = 300ms});
  ASSERT_FALSE(during) << "two holders: the restarted members' grants counted";
  EXPECT_NE(during.error().message().find("guarded for another"), std::string::npos)
      << during.error().message();
  EXPECT_NE(during.error().message().find(cause), std::string::npos) << during.error().message();
}

TEST(AclGuard, TheDocumentedUserRunsTheGuard) {
  RedisCluster cluster(5, nodes_with(security_test::lock_user_arguments()));
  auto observer = std::make_shared<Misconfigured>();
  auto options = locker_options(cluster);
  options.observer = observer;
  auto contender = Client::create(options);
  expect_restart_guarded(cluster, *contender, "run_id changed");
  std::lock_guard<std::mutex> hold(observer->mutex);
  EXPECT_TRUE(observer->seen.empty()) << "the documented rule allows INFO";
}

// The rule docs/security.md gave before +info: every INFO is refused. Each member is
// remembered from its first connection all the same, so each reconnect is taken for a
// restart; the refusal is told once per node, to the observer and the log.
TEST(AclGuard, AUserWithoutInfoTakesEveryReconnectForARestartAndSaysSoOnce) {
  RedisCluster cluster(5, nodes_with(security_test::lock_user_arguments_without("+info")));
  auto observer = std::make_shared<Misconfigured>();
  auto lines = std::make_shared<std::vector<std::string>>();
  auto lines_mutex = std::make_shared<std::mutex>();
  auto options = locker_options(cluster);
  options.observer = observer;
  options.log = [lines, lines_mutex](LogLevel level, std::string_view line) {
    std::lock_guard<std::mutex> hold(*lines_mutex);
    if (level == LogLevel::warning) lines->emplace_back(line);
  };
  auto contender = Client::create(options);
  expect_restart_guarded(cluster, *contender, "INFO refused");
  std::lock_guard<std::mutex> hold(observer->mutex);
  EXPECT_EQ(observer->seen.size(), 5u);
  for (const auto& [node, details] : observer->seen) {
    ASSERT_EQ(details.size(), 1u) << node << ": told once, not per connection";
    EXPECT_NE(details[0].find("+info"), std::string::npos) << details[0];
  }
  std::lock_guard<std::mutex> hold_lines(*lines_mutex);
  int told = 0;
  for (const auto& line : *lines) told += line.find("grant the user +info") != std::string::npos;
  EXPECT_EQ(told, 5) << ::testing::PrintToString(*lines);
}

// The owner checks read the lock under pcall so that a key of another kind is "not
// ours"; a GET the user may not run must not read so too: an unlock would report success
// and leave the key held until its TTL ends. Every owner-checked call reports the
// refusal, naming the node, and the key is still ours to release once the rule is fixed.
TEST(AclGuard, AUserWithoutGetIsToldSoByEveryOwnerCheckedCall) {
  RedisCluster cluster(3, nodes_with(security_test::lock_user_arguments_without("+get")));
  auto options = locker_options(cluster);
  options.member_guard.observed_restarts = false;
  auto client = Client::create(options);
  auto lock = client->lock("lock:no-get", {.ttl = 10s});
  ASSERT_TRUE(lock) << lock.error().message();
  const std::string refused = "can't run this command or subcommand";
  auto extended = lock->extend(10s);
  ASSERT_FALSE(extended) << "extend succeeded without reading the lock";
  EXPECT_NE(extended.error().message().find(refused), std::string::npos)
      << extended.error().message();
  EXPECT_NE(extended.error().message().find("127.0.0.1:" + std::to_string(cluster[0].port())),
            std::string::npos)
      << extended.error().message();
  auto released = lock->unlock();
  ASSERT_FALSE(released) << "unlock reported success and left the key held";
  EXPECT_NE(released.error().message().find(refused), std::string::npos)
      << released.error().message();
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    EXPECT_EQ(cluster[i].command({"EXISTS", "lock:no-get"}).integer, 1) << "node " << i;
  }
}

}  // namespace
}  // namespace redlock

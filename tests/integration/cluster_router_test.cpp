// The cluster member's connection (net/cluster_router.hpp) against scripted cluster
// nodes, for what a real cluster does only in a narrow window: a command redirected a
// second time, a slot map that does not come within a command's deadline, and the bytes
// an ASK redirection sends.

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "net/connection.hpp"
#include "net/pipeline.hpp"
#include "proxy/fault_proxy.hpp"
#include "scripts/lock_scripts.hpp"
#include "support/connection_harness.hpp"
#include "support/fake_cluster_node.hpp"

namespace redlock::net {
namespace {

using test::FakeNode;
using test::Outcome;
using test::TestLoop;
using test::without_map;
using namespace std::chrono_literals;

TEST(ClusterRouter, ASecondRedirectionIsTheCommandsAnswer) {
  TestLoop loop;
  test::DisagreeingNodes nodes(loop.get());
  const FakeNode& first = nodes.first;
  const FakeNode& second = nodes.second;
  auto cluster = test::open(loop.get(), "redis-cluster://" + first.address());
  Outcome outcome;
  test::send(*cluster, {"GET", "k"}, 2s, test::record(outcome));
  ASSERT_TRUE(loop.run_until([&] { return outcome.done(); }));
  EXPECT_EQ(outcome.calls, 1);
  EXPECT_EQ(outcome.error, make_error_code(errc::redis_error));
  EXPECT_EQ(outcome.detail, second.address() + ": MOVED 7 " + first.address() +
                                " (a second redirection; the slot map is being refreshed)");
  cluster.reset();
}

TEST(ClusterRouter, AskingDirectlyPrecedesTheRedirectedScriptSentAsEval) {
  TestLoop loop;
  std::uint16_t importing_port = 0;
  FakeNode owner(loop.get(), without_map([&] {
                   return "-ASK 7 127.0.0.1:" + std::to_string(importing_port) + "\r\n";
                 }));
  FakeNode importing(loop.get(), without_map([] { return std::string(":1\r\n"); }));
  importing_port = importing.port();
  auto cluster = test::open(loop.get(), "redis-cluster://" + owner.address());
  Outcome outcome;
  const std::vector<std::string_view> keys{"k"};
  const std::vector<std::string_view> args{"v", "1000"};
  cluster->eval(scripts::extend(), keys, args, 2s, test::record(outcome));
  ASSERT_TRUE(loop.run_until([&] { return outcome.done(); }));
  EXPECT_TRUE(outcome.ok()) << outcome.detail;
  EXPECT_EQ(outcome.integer, 1);
  // The importing server gets ASKING, then the script itself, never EVALSHA: its cache
  // may not have it, and nothing may come between ASKING and the command.
  ASSERT_FALSE(owner.received().empty());
  EXPECT_EQ(owner.received().back().at(3), "k");
  ASSERT_EQ(importing.received().size(), 2u);
  EXPECT_EQ(importing.received()[0], std::vector<std::string>{"ASKING"});
  EXPECT_EQ(importing.received()[1].at(0), "EVAL");
  EXPECT_EQ(importing.received()[1].at(2), "1");
  EXPECT_EQ(importing.received()[1].at(3), "k");
  cluster.reset();
}

TEST(ClusterRouter, ARoundsRedirectedCommandIsSentAgainWordForWord) {
  TestLoop loop;
  std::uint16_t new_port = 0;
  FakeNode old_owner(loop.get(), without_map([&] {
                       return "-MOVED 7 127.0.0.1:" + std::to_string(new_port) + "\r\n";
                     }));
  FakeNode new_owner(loop.get(), without_map([] { return std::string(":1\r\n"); }));
  new_port = new_owner.port();
  auto cluster = test::open(loop.get(), "redis-cluster://" + old_owner.address());
  // Words a copy could cut or merge: a NUL byte, an empty word, a CRLF inside one.
  const std::string binary("a\0b", 3);
  const std::vector<std::string_view> argv{"SET", "k", binary, "", "x\r\ny", "PX", "1000"};
  // Passed as a lock round passes it: the first pipeline to send it encodes it there.
  SharedCommand shared;
  Outcome set;
  cluster->command(argv, 2s, test::record(set), &shared);
  ASSERT_TRUE(loop.run_until([&] { return set.done(); }));
  EXPECT_TRUE(set.ok()) << set.detail;
  ASSERT_FALSE(new_owner.received().empty());
  EXPECT_EQ(new_owner.received().back(), std::vector<std::string>(argv.begin(), argv.end()));
  // A script's first use on a connection is EVAL; the second is the EVALSHA a round shares.
  const std::vector<std::string_view> keys{"k"};
  const std::vector<std::string_view> args{binary, "", "x\r\ny"};
  const std::vector<std::string> resent{
      "EVAL", std::string(scripts::extend().source), "1", "k", binary, "", "x\r\ny"};
  for (int use = 1; use <= 2; ++use) {
    shared.clear();
    Outcome outcome;
    cluster->eval(scripts::extend(), keys, args, 2s, test::record(outcome), &shared);
    ASSERT_TRUE(loop.run_until([&] { return outcome.done(); }));
    EXPECT_TRUE(outcome.ok()) << outcome.detail;
    // What the old owner was sent last, the map's requests (after each MOVED) aside.
    std::string sent;
    for (const auto& command : old_owner.received()) {
      if (command.at(0) != "CLUSTER") sent = command.at(0);
    }
    EXPECT_EQ(sent, use == 1 ? "EVAL" : "EVALSHA");
    EXPECT_EQ(new_owner.received().back(), resent) << "use " << use;
  }
  cluster.reset();
}

// While the router meets the cluster, a command waits for the first slot map up to
// connect_timeout beyond its own timeout (the seeds' connect and the map are not the
// node's round trip), and no longer: a silent seed costs connect_timeout (the map's
// request gives up), then the command's own timeout on the seed, where commands go
// without a map.
TEST(ClusterRouter, CommandsWaitingForTheFirstSlotMapWaitConnectTimeoutMore) {
  TestLoop loop;
  FakeNode silent(loop.get(), [](const std::vector<std::string>&) { return std::string(); });
  auto cluster = test::open(loop.get(), "redis-cluster://" + silent.address(),
                            [](ConnectionOptions& options) { options.connect_timeout = 300ms; });
  Outcome outcome;
  const auto start = test::Clock::now();
  test::send(*cluster, {"GET", "k"}, 150ms, test::record(outcome));
  ASSERT_TRUE(loop.run_until([&] { return outcome.done(); }));
  EXPECT_EQ(outcome.calls, 1);
  EXPECT_EQ(outcome.error, make_error_code(errc::timeout));
  // What is left of its 150 ms when the map's request gave up (a millisecond or two less).
  EXPECT_EQ(outcome.detail.rfind(silent.address() + ": no reply within 1", 0), 0u)
      << outcome.detail;
  EXPECT_GE(test::elapsed_ms(start, outcome.at), 440);
  EXPECT_LT(test::elapsed_ms(start, outcome.at), 2500);
  cluster.reset();
}

// The first slot map comes after the command's own timeout (a seed 120 ms away, a loaded
// machine): the command still reaches its shard. Before, a new client's first lock on
// cluster members failed whenever meeting the cluster took longer than node_timeout.
TEST(ClusterRouter, AFirstSlotMapSlowerThanTheCommandsTimeoutStillRoutesIt) {
  TestLoop loop;
  std::uint16_t live_port = 0;
  FakeNode live(loop.get(), [&](const std::vector<std::string>& argv) -> std::string {
    if (argv.at(0) == "CLUSTER" && argv.at(1) == "SHARDS") return "-ERR unknown subcommand\r\n";
    if (argv.at(0) == "CLUSTER") {
      return "*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$9\r\n127.0.0.1\r\n:" + std::to_string(live_port) +
             "\r\n";
    }
    return "$5\r\nvalue\r\n";
  });
  live_port = live.port();
  chaos::FaultProxy far_seed("127.0.0.1", live.port());
  far_seed.set_latency(chaos::Direction::down, 120ms);
  auto cluster =
      test::open(loop.get(), "redis-cluster://127.0.0.1:" + std::to_string(far_seed.port()),
                 [](ConnectionOptions& options) { options.connect_timeout = 2s; });
  Outcome outcome;
  test::send(*cluster, {"GET", "k"}, 50ms, test::record(outcome));
  ASSERT_TRUE(loop.run_until([&] { return outcome.done(); }));
  EXPECT_EQ(outcome.calls, 1);
  EXPECT_FALSE(outcome.error) << outcome.detail;
  EXPECT_EQ(outcome.str, "value");
  // Once the map is known, a command has its own timeout alone.
  Outcome next;
  test::send(*cluster, {"GET", "k"}, 50ms, test::record(next));
  ASSERT_TRUE(loop.run_until([&] { return next.done(); }));
  EXPECT_FALSE(next.error) << next.detail;
  cluster.reset();
}

// A seed that accepts connections and never answers (a paused server, a host gone without
// a reset) must not hold the member's first slot map while another seed answers: the seeds
// are asked at once and the first map is taken.
TEST(ClusterRouter, ASilentFirstSeedDoesNotHoldTheSlotMap) {
  TestLoop loop;
  FakeNode silent(loop.get(), [](const std::vector<std::string>&) { return std::string(); });
  std::uint16_t live_port = 0;
  FakeNode live(loop.get(), [&](const std::vector<std::string>& argv) -> std::string {
    if (argv.at(0) == "CLUSTER" && argv.at(1) == "SHARDS") return "-ERR unknown subcommand\r\n";
    if (argv.at(0) == "CLUSTER") {
      return "*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$9\r\n127.0.0.1\r\n:" + std::to_string(live_port) +
             "\r\n";
    }
    return "$5\r\nvalue\r\n";
  });
  live_port = live.port();
  auto cluster =
      test::open(loop.get(), "redis-cluster://" + silent.address() + "," + live.address(),
                 [](ConnectionOptions& options) { options.connect_timeout = 5s; });
  Outcome outcome;
  test::send(*cluster, {"GET", "k"}, 1s, test::record(outcome));
  ASSERT_TRUE(loop.run_until([&] { return outcome.done(); }));
  EXPECT_EQ(outcome.calls, 1);
  EXPECT_FALSE(outcome.error) << outcome.detail;
  EXPECT_EQ(outcome.str, "value");
  ASSERT_FALSE(live.received().empty());
  EXPECT_EQ(live.received().back(), (std::vector<std::string>{"GET", "k"}));
  cluster.reset();
}

TEST(ClusterRouter, CommandsWaitingForTheSlotMapAreCancelledByClose) {
  TestLoop loop;
  FakeNode silent(loop.get(), [](const std::vector<std::string>&) { return std::string(); });
  auto cluster = test::open(loop.get(), "redis-cluster://" + silent.address());
  Outcome outcome;
  test::send(*cluster, {"GET", "k"}, 5s, test::record(outcome));
  loop.run_for(20ms);
  EXPECT_FALSE(outcome.done());
  cluster.reset();
  EXPECT_EQ(outcome.calls, 1);
  EXPECT_EQ(outcome.error, make_error_code(errc::cancelled));
}

}  // namespace
}  // namespace redlock::net

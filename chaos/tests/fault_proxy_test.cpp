// The fault proxy in front of a real redis-server: each fault does what a scenario relies
// on. Time bounds are generous (two shared cores, sanitizer builds): they check that
// something happens or does not, not how fast.

#include "proxy/fault_proxy.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "raw_client.hpp"
#include "support/redis_server.hpp"

namespace redlock::chaos {
namespace {

using namespace std::chrono_literals;
using test::RawClient;
using test::resp;
using Clock = std::chrono::steady_clock;

const std::string ping = resp({"PING"});
constexpr std::string_view pong = "+PONG\r\n";
constexpr std::string_view ok = "+OK\r\n";

// The proxy closed the connection (with an RST, or a FIN if the reset could not be sent).
bool ended(RawClient::Status status) {
  return status == RawClient::Status::reset || status == RawClient::Status::closed;
}

class FaultProxyTest : public ::testing::Test {
 protected:
  redlock::test::RedisServer server_;
  FaultProxy proxy_{"127.0.0.1", server_.port()};
};

TEST_F(FaultProxyTest, PingPassesThrough) {
  EXPECT_NE(proxy_.port(), 0);
  EXPECT_NE(proxy_.port(), server_.port());
  RawClient client(proxy_.port());
  EXPECT_TRUE(client.round_trip(ping, pong));
  EXPECT_TRUE(client.round_trip(resp({"SET", "k", "v"}), ok));
  EXPECT_EQ(server_.command({"GET", "k"}).str, "v");
  const ProxyStats stats = proxy_.stats();
  EXPECT_EQ(stats.accepted, 1u);
  EXPECT_EQ(stats.active, 1u);
  EXPECT_GT(stats.forwarded[static_cast<int>(Direction::up)], 0u);
  EXPECT_GT(stats.forwarded[static_cast<int>(Direction::down)], 0u);
}

TEST_F(FaultProxyTest, PartitionBlackholesBothWaysUntilPass) {
  RawClient before(proxy_.port());
  ASSERT_TRUE(before.round_trip(ping, pong));
  RawClient idle(proxy_.port());
  ASSERT_TRUE(idle.round_trip(ping, pong));

  proxy_.set_mode(ProxyMode::partition);
  EXPECT_EQ(proxy_.mode(), ProxyMode::partition);
  before.send(resp({"SET", "k", "during"}));
  EXPECT_EQ(before.read(1, 300ms).status, RawClient::Status::timeout);
  // New connections are accepted (a blackhole, not a refusal) and hear nothing either.
  RawClient during(proxy_.port());
  during.send(ping);
  EXPECT_EQ(during.read(1, 300ms).status, RawClient::Status::timeout);
  EXPECT_TRUE(server_.command({"GET", "k"}).is_nil());  // the request never arrived

  proxy_.set_mode(ProxyMode::pass);
  // Both lost bytes, and TCP never delivers a stream with a gap: they are reset when
  // the partition heals. An idle connection lost nothing and carries on.
  EXPECT_TRUE(ended(before.read(1, 2s).status));
  EXPECT_TRUE(ended(during.read(1, 2s).status));
  EXPECT_TRUE(idle.round_trip(ping, pong));
  RawClient after(proxy_.port());
  EXPECT_TRUE(after.round_trip(ping, pong));
  EXPECT_TRUE(server_.command({"GET", "k"}).is_nil());
}

TEST_F(FaultProxyTest, DroppedRepliesStillApplyTheRequest) {
  RawClient client(proxy_.port());
  proxy_.set_mode(ProxyMode::drop_replies);
  client.send(resp({"SET", "k", "applied"}));
  EXPECT_EQ(client.read(1, 300ms).status, RawClient::Status::timeout);
  EXPECT_EQ(server_.command({"GET", "k"}).str, "applied");

  EXPECT_GT(proxy_.stats().dropped[static_cast<int>(Direction::down)], 0u);

  // The lost reply stays lost: the connection is reset rather than resumed after a gap.
  proxy_.set_mode(ProxyMode::pass);
  EXPECT_TRUE(ended(client.read(1, 2s).status));
  RawClient again(proxy_.port());
  EXPECT_TRUE(again.round_trip(ping, pong));
}

TEST_F(FaultProxyTest, DroppedRequestsNeverReachTheServer) {
  RawClient client(proxy_.port());
  proxy_.set_mode(ProxyMode::drop_requests);
  client.send(resp({"SET", "k", "lost"}));
  EXPECT_EQ(client.read(1, 300ms).status, RawClient::Status::timeout);
  EXPECT_TRUE(server_.command({"GET", "k"}).is_nil());
  EXPECT_GT(proxy_.stats().dropped[static_cast<int>(Direction::up)], 0u);

  proxy_.set_mode(ProxyMode::pass);
  EXPECT_TRUE(ended(client.read(1, 2s).status));
  RawClient again(proxy_.port());
  EXPECT_TRUE(again.round_trip(ping, pong));
}

TEST_F(FaultProxyTest, LatencyDelaysEachDirection) {
  RawClient client(proxy_.port());
  ASSERT_TRUE(client.round_trip(ping, pong));
  // A timer may fire up to a millisecond early relative to the client's clock.
  constexpr auto at_least = 195ms;

  for (Direction direction : {Direction::up, Direction::down}) {
    proxy_.set_latency(direction, 200ms);
    const auto start = Clock::now();
    EXPECT_TRUE(client.round_trip(ping, pong, 5s)) << to_string(direction);
    EXPECT_GE(Clock::now() - start, at_least) << to_string(direction);
    proxy_.set_latency(direction, 0ms);
    EXPECT_EQ(proxy_.latency(direction), 0ms);
  }

  proxy_.set_latency(Direction::up, 200ms);
  proxy_.set_latency(Direction::down, 200ms);
  const auto start = Clock::now();
  EXPECT_TRUE(client.round_trip(ping, pong, 5s));
  EXPECT_GE(Clock::now() - start, 2 * at_least);
}

TEST_F(FaultProxyTest, LoweringTheLatencyKeepsTheOrder) {
  RawClient client(proxy_.port());
  proxy_.set_latency(Direction::up, 300ms);
  client.send(resp({"SET", "k", "first"}));
  std::this_thread::sleep_for(20ms);  // let the proxy receive it before the change
  proxy_.set_latency(Direction::up, 0ms);
  client.send(resp({"SET", "k", "second"}));
  const auto replies = client.read(2 * ok.size(), 5s);
  EXPECT_EQ(replies.status, RawClient::Status::data);
  EXPECT_EQ(server_.command({"GET", "k"}).str, "second");
}

TEST_F(FaultProxyTest, ResetClosesEveryClientConnection) {
  RawClient first(proxy_.port());
  RawClient second(proxy_.port());
  ASSERT_TRUE(first.round_trip(ping, pong));
  ASSERT_TRUE(second.round_trip(ping, pong));

  proxy_.reset_all();
  for (RawClient* client : {&first, &second}) {
    const auto status = client->read(1, 2s).status;
    EXPECT_TRUE(status == RawClient::Status::reset || status == RawClient::Status::closed);
  }
  EXPECT_EQ(proxy_.stats().resets, 2u);
  EXPECT_EQ(proxy_.stats().active, 0u);

  RawClient after(proxy_.port());
  EXPECT_TRUE(after.round_trip(ping, pong));
}

TEST_F(FaultProxyTest, ServerDeathReachesTheClientOnlyAfterThePartition) {
  RawClient client(proxy_.port());
  ASSERT_TRUE(client.round_trip(ping, pong));

  proxy_.set_mode(ProxyMode::partition);
  server_.kill9();
  EXPECT_EQ(client.read(1, 300ms).status, RawClient::Status::timeout);

  proxy_.set_mode(ProxyMode::pass);
  const auto status = client.read(1, 2s).status;
  EXPECT_TRUE(status == RawClient::Status::reset || status == RawClient::Status::closed);

  // With the server gone, a new client is accepted, then reset; after a restart on the
  // same port it is served again.
  RawClient refused(proxy_.port());
  EXPECT_EQ(refused.read(1, 2s).status, RawClient::Status::reset);
  server_.restart();
  RawClient again(proxy_.port());
  EXPECT_TRUE(again.round_trip(ping, pong));
}

TEST_F(FaultProxyTest, ModesChangeFromManyThreadsWhileTrafficFlows) {
  std::atomic<bool> stop{false};
  std::vector<std::thread> flippers;
  for (int t = 0; t < 3; ++t) {
    flippers.emplace_back([&, t] {
      const ProxyMode modes[] = {ProxyMode::partition, ProxyMode::drop_replies,
                                 ProxyMode::drop_requests, ProxyMode::pass};
      for (int i = 0; !stop; ++i) {
        proxy_.set_mode(modes[(i + t) % 4]);
        proxy_.set_latency(i % 2 ? Direction::up : Direction::down,
                           std::chrono::milliseconds(i % 3));
        if (i % 50 == 0) proxy_.reset_all();
        std::this_thread::sleep_for(1ms);
      }
    });
  }
  for (int i = 0; i < 30; ++i) {
    // Any outcome will do (a reset may even fail the send): this exercises the proxy's
    // bookkeeping under concurrent changes, for the sanitizers to judge.
    RawClient client(proxy_.port());
    try {
      client.send(ping);
      client.read(pong.size(), 20ms);
    } catch (const std::runtime_error&) {
    }
  }
  stop = true;
  for (auto& thread : flippers) thread.join();

  proxy_.set_mode(ProxyMode::pass);
  proxy_.set_latency(Direction::up, 0ms);
  proxy_.set_latency(Direction::down, 0ms);
  RawClient client(proxy_.port());
  EXPECT_TRUE(client.round_trip(ping, pong));
}

// A member's address moved to another server: open connections end (their client must
// reconnect and find out), new ones reach the new server, and a bad host changes nothing.
TEST_F(FaultProxyTest, RetargetEndsOpenConnectionsAndSendsNewOnesToTheNewServer) {
  redlock::test::RedisServer other;
  RawClient before(proxy_.port());
  ASSERT_TRUE(before.round_trip(ping, pong));
  EXPECT_THROW(proxy_.retarget("localhost", other.port()), std::runtime_error);
  EXPECT_TRUE(before.round_trip(ping, pong)) << "a refused retarget closed a connection";

  proxy_.retarget("127.0.0.1", other.port());
  EXPECT_TRUE(ended(before.read(1, 2s).status));
  RawClient after(proxy_.port());
  ASSERT_TRUE(after.round_trip(resp({"SET", "moved", "yes"}), ok));
  EXPECT_EQ(other.command({"GET", "moved"}).str, "yes");
  EXPECT_TRUE(server_.command({"GET", "moved"}).is_nil());
}

TEST(FaultProxy, RejectsAHostName) {
  EXPECT_THROW(FaultProxy("localhost", 6379), std::runtime_error);
}

TEST(FaultProxy, ClosesConnectionsOnDestruction) {
  redlock::test::RedisServer server;
  std::optional<RawClient> client;
  {
    FaultProxy proxy("127.0.0.1", server.port());
    client.emplace(proxy.port());
    ASSERT_TRUE(client->round_trip(ping, pong));
    proxy.set_latency(Direction::up, 1000ms);
    client->send(ping);  // still in the delay line when the proxy goes away
  }
  // A FIN, or an RST when the kernel still held unread bytes of the client's.
  const auto status = client->read(1, 2s).status;
  EXPECT_TRUE(status == RawClient::Status::closed || status == RawClient::Status::reset);
}

}  // namespace
}  // namespace redlock::chaos

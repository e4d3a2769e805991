// A new client's first commands, against five real nodes behind fault proxies. Before a
// member's first connection is up, a command waits for the connect, the handshake and
// the member's INFO as well as for its own reply: node_timeout alone (one round trip)
// failed a new client's first lock on a healthy fleet whenever that took a few round
// trips (a loaded machine, a cluster's slot map, a remote fleet). A member that refuses
// the connection, or stays silent, must still cost no more than it did.

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <redlock/redlock.hpp>

#include "proxy/fault_proxy.hpp"
#include "support/lock_nodes_fixture.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

class FirstContactTest : public test::LockNodesTest {
 protected:
  // The five nodes behind proxies, with an explicit node_timeout.
  Options behind_proxies(milliseconds node_timeout) {
    auto options = LockNodesTest::options();
    options.nodes.clear();
    options.node_timeout = node_timeout;
    for (std::size_t i = 0; i < cluster().size(); ++i) {
      proxies_.push_back(std::make_unique<chaos::FaultProxy>("127.0.0.1", cluster()[i].port()));
      options.nodes.push_back("redis://127.0.0.1:" + std::to_string(proxies_.back()->port()));
    }
    return options;
  }

  std::vector<std::unique_ptr<chaos::FaultProxy>> proxies_;
};

// Replies take 60 ms: one round trip fits node_timeout (100 ms, with room for a loaded
// machine's stalls), the handshake and the command together (two or three round trips)
// do not.
TEST_F(FirstContactTest, ANewClientsFirstLockWaitsForItsConnectionsBeyondNodeTimeout) {
  auto options = behind_proxies(100ms);
  for (auto& proxy : proxies_) proxy->set_latency(chaos::Direction::down, 60ms);
  for (const bool fencing : {false, true}) {
    auto client = Client::create(options);
    auto lock = client->lock("first-contact", {.ttl = 10s, .fencing = fencing});
    ASSERT_TRUE(lock) << (fencing ? "fenced: " : "") << lock.error().message();
    // Connected, a command is bounded by node_timeout again, and 60 ms fits it.
    auto extended = lock->extend(10s);
    ASSERT_TRUE(extended) << "extend on the connected client: " << extended.error().message();
    auto released = lock->unlock();
    ASSERT_TRUE(released) << released.error().message();
  }
  // Every kind's first call, each on a new client.
  {
    auto client = Client::create(options);
    auto writer = client->write_lock("first-contact:rw", {.ttl = 10s});
    ASSERT_TRUE(writer) << writer.error().message();
    ASSERT_TRUE(writer->unlock());
  }
  {
    auto client = Client::create(options);
    SemaphoreOptions two;
    two.permits = 2;
    two.lock.ttl = 10s;
    auto permit = client->acquire_permit("first-contact:sem", two);
    ASSERT_TRUE(permit) << permit.error().message();
    ASSERT_TRUE(permit->unlock());
  }
  {
    auto client = Client::create(options);
    const std::vector<std::string> keys{"first-contact:a", "first-contact:b"};
    auto set = client->lock_all(keys, {.ttl = 10s});
    ASSERT_TRUE(set) << set.error().message();
    ASSERT_TRUE(set->unlock());
  }
}

// The allowance is the first connection's alone: once connected, a command slower than
// node_timeout times out as before.
TEST_F(FirstContactTest, AConnectedClientStillTimesOutAfterNodeTimeout) {
  auto options = behind_proxies(50ms);
  auto client = Client::create(options);
  auto warm = client->lock("first-contact:warm", {.ttl = 10s});
  ASSERT_TRUE(warm) << warm.error().message();
  ASSERT_TRUE(warm->unlock());
  for (auto& proxy : proxies_) proxy->set_latency(chaos::Direction::down, 150ms);
  const auto before = Clock::now();
  auto lock = client->lock("first-contact:slow", {.ttl = 10s});
  const auto took = Clock::now() - before;
  ASSERT_FALSE(lock);
  EXPECT_EQ(lock.error().code(), errc::quorum_unreachable) << lock.error().message();
  EXPECT_LT(took, 140ms) << "a connected member waited beyond node_timeout";
  for (auto& proxy : proxies_) proxy->set_latency(chaos::Direction::down, 0ms);
}

// A silent member (it accepts and never answers): the other four decide, without waiting
// for its connect deadline; with three silent the failure comes once the first
// connection's deadline passed, naming them.
TEST_F(FirstContactTest, SilentMembersDelayNoDecisionTheOthersCanMake) {
  auto options = behind_proxies(50ms);
  options.connect_timeout = 1000ms;
  proxies_[0]->set_mode(chaos::ProxyMode::partition);
  {
    auto client = Client::create(options);
    const auto before = Clock::now();
    auto lock = client->lock("first-contact:silent", {.ttl = 10s});
    const auto took = Clock::now() - before;
    ASSERT_TRUE(lock) << lock.error().message();
    EXPECT_LT(took, 500ms) << "the round waited for the silent member's connect";
    ASSERT_TRUE(lock->unlock());
  }
  proxies_[1]->set_mode(chaos::ProxyMode::partition);
  proxies_[2]->set_mode(chaos::ProxyMode::partition);
  {
    auto client = Client::create(options);
    const auto before = Clock::now();
    auto lock = client->lock("first-contact:minority", {.ttl = 10s});
    const auto took = Clock::now() - before;
    ASSERT_FALSE(lock);
    EXPECT_EQ(lock.error().code(), errc::quorum_unreachable) << lock.error().message();
    EXPECT_LT(took, 3s) << "bounded by connect_timeout + node_timeout";
    EXPECT_NE(lock.error().message().find(options.nodes[0]), std::string::npos)
        << lock.error().message();
  }
}

}  // namespace
}  // namespace redlock

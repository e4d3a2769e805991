// A member's subscriber (member/member_subscriber.hpp) against scripted cluster nodes, for
// what a real cluster does only in the moment a slot changes hands: a subscription
// redirected back and forth while the nodes disagree on the slot's owner. Asked again
// after a short back-off, it reaches the owner once they agree; a refusal is told once and
// never asked again.

#include "member/member_subscriber.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "net/endpoint.hpp"
#include "support/connection_harness.hpp"
#include "support/fake_cluster_node.hpp"

namespace redlock::detail {
namespace {

using test::FakeNode;
using test::TestLoop;
using test::without_map;
using namespace std::chrono_literals;

constexpr const char* key = "orders";
constexpr const char* name = "orders:released";
constexpr const char* shard_channel = "{orders}:released";

std::string confirmation(const std::string& channel) {
  return "*3\r\n$10\r\nssubscribe\r\n$" + std::to_string(channel.size()) + "\r\n" + channel +
         "\r\n:1\r\n";
}

std::size_t count(const FakeNode& node, const std::string& word) {
  return static_cast<std::size_t>(
      std::count_if(node.received().begin(), node.received().end(),
                    [&](const std::vector<std::string>& argv) { return argv.at(0) == word; }));
}

struct Seen {
  bool in_use = true;
  std::vector<std::string> refusals;
  int confirmed = 0;
  int failed = 0;
};

MemberSubscriber::Hooks hooks(Seen& seen) {
  MemberSubscriber::Hooks hooks;
  hooks.on_message = [](const std::string&, const redisReply*) {};
  hooks.in_use = [&seen](const std::string& channel) { return seen.in_use && channel == name; };
  // Left empty: the renewals a connection's start asks for are not what these tests count.
  hooks.for_each_in_use = nullptr;
  hooks.refused = [&seen](std::string_view why) { seen.refusals.emplace_back(why); };
  return hooks;
}

net::ConnectionOptions cluster_options(const FakeNode& seed) {
  net::ConnectionOptions options;
  options.endpoint = *net::parse_endpoint("redis-cluster://" + seed.address());
  // Scripted jitter: the back-off's lower half, so the test waits no longer than it must.
  options.random = [] { return std::uint64_t{0}; };
  return options;
}

// Two nodes that send the subscription to each other for its first `disagreeing` tries
// (a failover's moment: each believes the other owns the slot), after which the second
// accepts it.
TEST(MemberSubscriber, ASubscriptionRedirectedTwiceIsAskedAgainUntilTheOwnerTakesIt) {
  for (const int disagreeing : {1, 2, 5}) {
    SCOPED_TRACE(disagreeing);
    TestLoop loop;
    int tries = 0;
    test::DisagreeingNodes nodes(loop.get(), [&] {
      return ++tries <= disagreeing ? std::string() : confirmation(shard_channel);
    });
    const FakeNode& first = nodes.first;
    Seen seen;
    {
      MemberSubscriber subscriber(loop.get(), cluster_options(first), 1s, hooks(seen));
      subscriber.subscribe(key, name, [&](bool ok) { ++(ok ? seen.confirmed : seen.failed); });
      EXPECT_TRUE(loop.run_until([&] { return tries > disagreeing; }))
          << "asked " << tries << " times";
      loop.run_for(50ms);
      EXPECT_EQ(seen.failed, 1) << "the first answer is the caller's, as it came";
      EXPECT_EQ(seen.confirmed, 0);
      EXPECT_TRUE(seen.refusals.empty()) << "a redirection is not a refusal: " << seen.refusals[0];
      loop.run_for(200ms);
      EXPECT_EQ(tries, disagreeing + 1) << "asked again after the owner took it";
    }
  }
}

// A subscription the member refuses (an ACL user without the channel) is told once and
// never asked again: it would be refused again, a command at a time.
TEST(MemberSubscriber, ARefusedSubscriptionIsToldOnceAndNotAskedAgain) {
  TestLoop loop;
  FakeNode node(loop.get(), without_map([] {
                  return std::string("-NOPERM No permissions to access a channel\r\n");
                }));
  Seen seen;
  {
    MemberSubscriber subscriber(loop.get(), cluster_options(node), 1s, hooks(seen));
    subscriber.subscribe(key, name, [&](bool ok) { ++(ok ? seen.confirmed : seen.failed); });
    ASSERT_TRUE(loop.run_until([&] { return seen.failed == 1; }));
    loop.run_for(300ms);
  }
  EXPECT_EQ(count(node, "SSUBSCRIBE"), 1u);
  ASSERT_EQ(seen.refusals.size(), 1u);
  EXPECT_NE(seen.refusals[0].find("NOPERM"), std::string::npos) << seen.refusals[0];
}

// A channel no waiter uses any more is not asked again, however its last try ended.
TEST(MemberSubscriber, AChannelNoLongerInUseIsNotAskedAgain) {
  TestLoop loop;
  test::DisagreeingNodes nodes(loop.get());
  const FakeNode& first = nodes.first;
  const FakeNode& second = nodes.second;
  Seen seen;
  {
    MemberSubscriber subscriber(loop.get(), cluster_options(first), 1s, hooks(seen));
    subscriber.subscribe(key, name, [&](bool ok) {
      ++(ok ? seen.confirmed : seen.failed);
      seen.in_use = false;
    });
    ASSERT_TRUE(loop.run_until([&] { return seen.failed == 1; }));
    loop.run_for(300ms);
  }
  EXPECT_EQ(count(first, "SSUBSCRIBE"), 1u);
  EXPECT_EQ(count(second, "SSUBSCRIBE"), 1u);
}

}  // namespace
}  // namespace redlock::detail

// Rows of the bad-input table about the client's configuration: quorum, duplicate nodes,
// malformed URLs. Client::create refuses them with std::invalid_argument naming the field
// or the URL (password masked), before any thread or connection exists.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <ostream>
#include <stdexcept>

#include <redlock/redlock.hpp>

#include "harness.hpp"

namespace redlock::badinput {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// The message of the std::invalid_argument that Client::create throws for `options`.
std::string refusal(const Options& options) {
  try {
    Client::create(options);
  } catch (const std::invalid_argument& error) {
    ::testing::Test::RecordProperty("message", error.what());
    return error.what();
  }
  ADD_FAILURE() << "Client::create accepted the options";
  return {};
}

std::string refusal(std::vector<std::string> nodes, int quorum = 0) {
  auto opts = options(std::move(nodes));
  opts.quorum = quorum;
  return refusal(opts);
}

// Nodes that are never contacted: Client::create refuses before connecting.
std::vector<std::string> five_nodes() {
  std::vector<std::string> nodes;
  for (int port = 7101; port <= 7105; ++port)
    nodes.push_back("redis://127.0.0.1:" + std::to_string(port));
  return nodes;
}

TEST(OptionsTest, QuorumAboveNodeCountIsRefused) {
  EXPECT_EQ(refusal(five_nodes(), 6),
            "quorum: 6 is outside [3, 5] for 5 nodes (below a majority two owners could hold "
            "the lock at once)");
}

TEST(OptionsTest, QuorumBelowMajorityOrNegativeIsRefused) {
  EXPECT_THAT(refusal(five_nodes(), 2), StartsWith("quorum: 2 is outside [3, 5] for 5 nodes"));
  EXPECT_THAT(refusal(five_nodes(), -1), StartsWith("quorum: -1 is outside [3, 5] for 5 nodes"));
}

TEST(OptionsTest, EmptyNodeListIsRefused) {
  EXPECT_EQ(refusal(std::vector<std::string>{}),
            "nodes: the node list is empty (give at least one redis:// URL)");
}

TEST(OptionsTest, SameNodeTwiceIsRefusedNamingBothEntries) {
  auto nodes = five_nodes();
  nodes[3] = nodes[1];
  EXPECT_EQ(refusal(nodes),
            "nodes: duplicate node 127.0.0.1:7102 (entries 2 and 4); each node must be an "
            "independent master");
}

// Spellings that differ only in what the parser normalises are one node.
// WAIT would not reach the shard that took a cluster member's write.
TEST(OptionsTest, ReplicaAcksWithAClusterMemberAreRefused) {
  auto opts = options({"redis-cluster://127.0.0.1:7101,127.0.0.1:7102", "redis://127.0.0.1:7103",
                       "redis://127.0.0.1:7104"});
  opts.member_guard.replicas_to_ack = 1;
  EXPECT_EQ(refusal(opts),
            "member_guard.replicas_to_ack: not supported with cluster member "
            "redis-cluster://127.0.0.1:7101,127.0.0.1:7102: its WAIT would not follow each write "
            "to the shard that took it; leave it 0 (a shard that fails over is guarded: "
            "member_guard.observed_restarts)");
}

// A Sentinel group with two masters after a failover votes twice, and two majorities of
// five share one member: a fleet with Sentinel groups must close that, or say its servers
// do. Each remedy is accepted, for every fleet size; clusters and standalone masters need
// none.
TEST(OptionsTest, SentinelGroupsThatMayVoteTwiceAreRefusedWithoutARemedy) {
  auto nodes = five_nodes();
  nodes[0] = "redis-sentinel://127.0.0.1:26379,127.0.0.1:26380/orders";
  EXPECT_EQ(refusal(options(nodes)),
            "nodes: Sentinel group redis-sentinel://127.0.0.1:26379,127.0.0.1:26380/orders may "
            "have two masters at once after a failover, and one member voting twice breaks a "
            "majority of 5: set member_guard.replicas_to_ack to the number of replicas of each "
            "group, or quorum 4 (two quorums then share two members), or, with "
            "min-replicas-to-write on the servers, member_guard.allow_two_masters "
            "(docs/safety.md, \"Sentinel groups\")");
  for (std::size_t count = 1; count <= 7; ++count) {
    std::vector<std::string> fleet(nodes.begin(), nodes.begin() + std::min<std::size_t>(count, 5));
    for (std::size_t port = fleet.size(); port < count; ++port) {
      fleet.push_back("redis://127.0.0.1:" + std::to_string(7200 + port));
    }
    const int n = static_cast<int>(count);
    const int majority = n / 2 + 1;
    const int absorbing = (n + 3) / 2;  // the least q with 2q >= n + 2
    for (int quorum = majority; quorum <= n; ++quorum) {
      auto opts = options(fleet);
      opts.quorum = quorum;
      bool accepted = true;
      try {
        (void)Client::create(opts);
      } catch (const std::invalid_argument&) {
        accepted = false;
      }
      EXPECT_EQ(accepted, quorum >= absorbing) << n << " nodes, quorum " << quorum;
    }
    auto acked = options(fleet);
    acked.member_guard.replicas_to_ack = 1;
    EXPECT_NO_THROW((void)Client::create(acked)) << n << " nodes, replicas_to_ack 1";
    auto allowed = options(fleet);
    allowed.member_guard.allow_two_masters = true;
    EXPECT_NO_THROW((void)Client::create(allowed)) << n << " nodes, allow_two_masters";
  }
  auto clusters = five_nodes();
  clusters[0] = "redis-cluster://127.0.0.1:7101,127.0.0.1:7102";
  EXPECT_NO_THROW((void)Client::create(options(clusters)));
}

TEST(OptionsTest, SameNodeSpelledDifferentlyIsRefused) {
  const std::vector<std::string> aliases{
      "REDIS://127.0.0.1:7102",          // scheme case
      "redis://127.0.0.1:7102/0",        // default database
      "redis://:secret@127.0.0.1:7102",  // credentials
      "redis://user:secret@127.0.0.1:7102/",
      // Another database of the same server: it fails with the server, so it is not an
      // independent node.
      "redis://127.0.0.1:7102/1",
  };
  for (const auto& alias : aliases) {
    auto nodes = five_nodes();
    nodes[4] = alias;
    const std::string message = refusal(nodes);
    EXPECT_THAT(message, StartsWith("nodes: duplicate node 127.0.0.1:7102 (entries 2 and 5)"))
        << alias;
    EXPECT_THAT(message, Not(HasSubstr("secret")));
  }
}

// Host names are case-insensitive.
TEST(OptionsTest, HostNamesDifferingInCaseAreOneNode) {
  auto nodes = five_nodes();
  nodes[0] = "redis://redis-1.example:6379";
  nodes[1] = "redis://REDIS-1.Example:6379/2";
  EXPECT_EQ(refusal(nodes),
            "nodes: duplicate node redis-1.example:6379 (entries 1 and 2); each node must be an "
            "independent master");
}

TEST(OptionsTest, SameUnixSocketIsOneNode) {
  auto nodes = five_nodes();
  nodes[1] = "unix:///run/redis/redis.sock";
  nodes[2] = "unix://:secret@/run/redis/redis.sock?db=3";
  EXPECT_EQ(refusal(nodes),
            "nodes: duplicate node unix:/run/redis/redis.sock (entries 2 and 3); each node must "
            "be an independent master");
}

TEST(OptionsTest, SameIpv6NodeIsRefused) {
  auto nodes = five_nodes();
  nodes[1] = "redis://[::1]:7000";
  nodes[4] = "redis://[::1]:7000/0";
  EXPECT_EQ(refusal(nodes),
            "nodes: duplicate node [::1]:7000 (entries 2 and 5); each node must be an independent "
            "master");
}

// A name and an address of the same server are not recognised as one node: telling them
// apart would need a DNS lookup inside Client::create (blocking, and an answer that can
// change later). The table documents this; the symptom at run time is a node that
// reports the lock held by the acquirer's own value.
TEST(OptionsTest, HostNameAndAddressOfOneServerAreNotRecognisedAsOneNode) {
  const std::uint16_t port = healthy()[0].port();
  auto nodes = healthy_urls(5);
  nodes[4] = "redis://localhost:" + std::to_string(port);
  auto client = Client::create(options(nodes));
  auto lock = client->try_lock(test_key(), ttl);
  ASSERT_TRUE(lock) << lock.error().message();
  // Both entries reached one server: at most one of them can have granted the SET NX.
  auto status = client->status(test_key());
  ASSERT_TRUE(status) << status.error().message();
  EXPECT_EQ(status->at(0).holder, lock->value());
  EXPECT_EQ(status->at(4).holder, lock->value());
  const auto& first = lock->nodes().at(0);
  const auto& alias = lock->nodes().at(4);
  RecordProperty("first", describe(first));
  RecordProperty("alias", describe(alias));
  EXPECT_FALSE(first.status == NodeStatus::granted && alias.status == NodeStatus::granted)
      << describe(first) << " / " << describe(alias);
}

struct MalformedUrl {
  std::string url;
  std::string message;  ///< the whole message of Client::create
};

// gtest would otherwise print the parameter as raw bytes, reading the strings' padding.
void PrintTo(const MalformedUrl& row, std::ostream* out) {
  *out << '"' << row.url << '"';
}

class MalformedUrlTest : public ::testing::TestWithParam<MalformedUrl> {};

TEST_P(MalformedUrlTest, IsRefusedNamingTheUrlWithoutItsPassword) {
  auto nodes = five_nodes();
  nodes[2] = GetParam().url;
  const std::string message = refusal(nodes);
  EXPECT_EQ(message, GetParam().message);
  EXPECT_THAT(message, Not(HasSubstr("secret")));
}

INSTANTIATE_TEST_SUITE_P(
    Rows, MalformedUrlTest,
    ::testing::Values(
        MalformedUrl{"", "nodes: invalid node URL \"\": empty URL"},
        MalformedUrl{"127.0.0.1:6379",
                     "nodes: invalid node URL \"127.0.0.1:6379\": missing scheme (expected "
                     "redis://, rediss://, unix://, redis-sentinel:// or redis-cluster://)"},
        MalformedUrl{"http://127.0.0.1:6379",
                     "nodes: invalid node URL \"http://127.0.0.1:6379\": unknown scheme 'http' "
                     "(expected redis, rediss, unix, redis-sentinel, rediss-sentinel, "
                     "redis-cluster or rediss-cluster)"},
        MalformedUrl{"redis://", "nodes: invalid node URL \"redis://\": missing host"},
        MalformedUrl{"redis://127.0.0.1:",
                     "nodes: invalid node URL \"redis://127.0.0.1:\": "
                     "missing port after ':'"},
        MalformedUrl{"redis://127.0.0.1:0",
                     "nodes: invalid node URL \"redis://127.0.0.1:0\": "
                     "port 0 out of range (1-65535)"},
        MalformedUrl{"redis://127.0.0.1:65536",
                     "nodes: invalid node URL \"redis://127.0.0.1:65536\": port 65536 out of "
                     "range (1-65535)"},
        MalformedUrl{"redis://127.0.0.1:63a9",
                     "nodes: invalid node URL "
                     "\"redis://127.0.0.1:63a9\": bad port '63a9' "
                     "(expected a number)"},
        MalformedUrl{"redis://127.0.0.1:6379/db1",
                     "nodes: invalid node URL \"redis://127.0.0.1:6379/db1\": bad db 'db1' "
                     "(expected 0 or more)"},
        MalformedUrl{"redis://127.0.0.1:6379/0/extra",
                     "nodes: invalid node URL \"redis://127.0.0.1:6379/0/extra\": unexpected "
                     "'/extra' after the address"},
        MalformedUrl{"redis://secret@127.0.0.1:6379",
                     "nodes: invalid node URL \"redis://***@127.0.0.1:6379\": credentials must "
                     "be [user]:password (for a password alone write "
                     "\"redis://:password@host\")"},
        MalformedUrl{"redis://alice:@127.0.0.1:6379",
                     "nodes: invalid node URL \"redis://alice:@127.0.0.1:6379\": ACL user "
                     "'alice' given without a password"},
        MalformedUrl{"redis://:sec%zzret@127.0.0.1:6379",
                     "nodes: invalid node URL \"redis://:***@127.0.0.1:6379\": bad "
                     "percent-escape in the credentials (use %XX with two hex digits)"},
        MalformedUrl{"redis://[::1:6379",
                     "nodes: invalid node URL \"redis://[::1:6379\": "
                     "missing ']' after the IPv6 address"},
        MalformedUrl{"redis://exa mple:6379",
                     "nodes: invalid node URL \"redis://exa "
                     "mple:6379\": contains whitespace or control "
                     "characters"},
        MalformedUrl{"redis://host!:6379",
                     "nodes: invalid node URL \"redis://host!:6379\": "
                     "bad character in host 'host!'"},
        // The password must be masked although the credentials are not followed by "@/".
        MalformedUrl{"unix://:secret@tmp/redis.sock",
                     "nodes: invalid node URL \"unix://:***@tmp/redis.sock\": socket path must "
                     "be absolute (write unix:///path/to/redis.sock)"},
        MalformedUrl{"unix://:secret@",
                     "nodes: invalid node URL \"unix://:***@\": socket path must be absolute "
                     "(write unix:///path/to/redis.sock)"},
        MalformedUrl{"unix://redis.sock",
                     "nodes: invalid node URL \"unix://redis.sock\": "
                     "socket path must be absolute (write "
                     "unix:///path/to/redis.sock)"}),
    [](const auto& info) { return "Url" + std::to_string(info.index); });

}  // namespace
}  // namespace redlock::badinput

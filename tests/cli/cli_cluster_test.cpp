// The redlock CLI with Redis Clusters among its --nodes: the commas of a cluster's seed
// list are the URL's, not the list's; acquire, status and release reach each key's owner.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_process.hpp"
#include "election_round_trip.hpp"
#include "support/redis_server.hpp"
#include "support/sharded_cluster.hpp"

namespace redlock::test {
namespace {

TEST(CliCluster, AClusterAndAStandaloneMasterInOneNodesList) {
  ShardedCluster cluster;
  RedisServer first;
  RedisServer second;
  const std::string nodes = first.url() + "," + cluster.url() + "," + second.url();
  // Every member must answer, the cluster too, which answers last on its first command
  // (its slot map comes first). The servers were started just now, on purpose: the
  // young-member rule is turned off.
  const std::vector<std::string> base = {"--nodes",  nodes, "--node-timeout",          "200ms",
                                         "--quorum", "3",   "--no-guard-young-members"};
  auto with = [&](std::vector<std::string> args) {
    std::vector<std::string> full = base;
    full.insert(full.end(), args.begin(), args.end());
    return full;
  };

  auto acquired = run_cli(with({"acquire", "--json", "cli:cluster"}));
  ASSERT_EQ(acquired.exit_code, 0) << acquired.err;
  const std::string value = nlohmann::json::parse(acquired.out).at("value");
  EXPECT_EQ(cluster.owner_of("cli:cluster").command({"GET", "cli:cluster"}).str, value);

  auto status = run_cli(with({"status", "--json", "cli:cluster"}));
  ASSERT_EQ(status.exit_code, 0) << status.err;
  const auto json = nlohmann::json::parse(status.out);
  ASSERT_EQ(json.at("nodes").size(), 3u);  // three members, not five pieces
  EXPECT_EQ(json.at("nodes")[1].at("node"), cluster.url());
  for (const auto& node : json.at("nodes")) EXPECT_EQ(node.at("holder"), value);
  // The cluster's shards; nothing for the standalone masters.
  const std::string shards = json.at("nodes")[1].at("served_by").get<std::string>();
  for (std::size_t i = 0; i < cluster.servers(); ++i) {
    EXPECT_THAT(shards,
                ::testing::HasSubstr("127.0.0.1:" + std::to_string(cluster.server(i).port())));
  }
  EXPECT_TRUE(json.at("nodes")[0].at("served_by").is_null());

  auto released = run_cli(with({"release", "cli:cluster", value}));
  ASSERT_EQ(released.exit_code, 0) << released.err;
  EXPECT_EQ(cluster.owner_of("cli:cluster").command({"EXISTS", "cli:cluster"}).integer, 0);

  // The election on the same members.
  expect_election_round_trip(base, "cli:cluster-election");
}

}  // namespace
}  // namespace redlock::test

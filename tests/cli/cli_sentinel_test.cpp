// The redlock CLI with Sentinel groups among its --nodes: the commas of a group's
// sentinel list are the URL's, not the list's; acquire, status and release reach the
// masters the sentinels name.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_process.hpp"
#include "election_round_trip.hpp"
#include "support/redis_server.hpp"
#include "support/sentinel_group.hpp"

namespace redlock::test {
namespace {

TEST(CliSentinel, GroupsAndAStandaloneMasterInOneNodesList) {
  SentinelGroupOptions one_replica;
  one_replica.replicas = 1;
  one_replica.master_name = "first";
  SentinelGroup first(one_replica);
  one_replica.master_name = "second";
  SentinelGroup second(one_replica);
  RedisServer standalone;
  const std::string nodes = first.url() + "," + second.url() + "," + standalone.url();
  // A group with two masters after a failover would vote twice: without a remedy the
  // tool refuses the nodes list, naming its flags.
  auto refused = run_cli({"--nodes", nodes, "--no-guard-young-members", "status", "cli:sentinel"});
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_THAT(refused.err, ::testing::HasSubstr("may have two masters at once after a failover"));
  EXPECT_THAT(refused.err,
              ::testing::HasSubstr("--replicas-to-ack N, --quorum Q or --allow-two-masters"));
  // The servers were started just now, on purpose: the young-member rule is turned off.
  // These servers are not set with min-replicas-to-write; the test is about resolving
  // the groups' masters.
  const std::vector<std::string> base = {"--nodes",
                                         nodes,
                                         "--node-timeout",
                                         "200ms",
                                         "--no-guard-young-members",
                                         "--allow-two-masters"};
  auto with = [&](std::vector<std::string> args) {
    std::vector<std::string> full = base;
    full.insert(full.end(), args.begin(), args.end());
    return full;
  };

  auto acquired = run_cli(with({"acquire", "--json", "cli:sentinel"}));
  ASSERT_EQ(acquired.exit_code, 0) << acquired.err;
  const std::string value = nlohmann::json::parse(acquired.out).at("value");
  EXPECT_EQ(SentinelGroup::ask(first.master(), {"GET", "cli:sentinel"}).str, value);
  EXPECT_EQ(SentinelGroup::ask(second.master(), {"GET", "cli:sentinel"}).str, value);

  auto status = run_cli(with({"status", "--json", "cli:sentinel"}));
  ASSERT_EQ(status.exit_code, 0) << status.err;
  const auto json = nlohmann::json::parse(status.out);
  ASSERT_EQ(json.at("nodes").size(), 3u);  // three members, not five pieces
  EXPECT_EQ(json.at("nodes")[0].at("node"), first.url());
  EXPECT_EQ(json.at("nodes")[1].at("node"), second.url());
  EXPECT_EQ(json.at("nodes")[2].at("node"), standalone.url());
  for (const auto& node : json.at("nodes")) EXPECT_EQ(node.at("holder"), value);
  // Which master answered for each group; nothing for the standalone master.
  const std::string first_master =
      "master 'first' at 127.0.0.1:" + std::to_string(first.master().port()) +
      " (named by sentinel 127.0.0.1:";
  EXPECT_THAT(json.at("nodes")[0].at("served_by").get<std::string>(),
              ::testing::StartsWith(first_master));
  EXPECT_THAT(json.at("nodes")[1].at("served_by").get<std::string>(),
              ::testing::HasSubstr("master 'second' at 127.0.0.1:" +
                                   std::to_string(second.master().port())));
  EXPECT_TRUE(json.at("nodes")[2].at("served_by").is_null());
  auto text = run_cli(with({"status", "cli:sentinel"}));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, ::testing::HasSubstr("  served by " + first_master));

  auto released = run_cli(with({"release", "cli:sentinel", value}));
  ASSERT_EQ(released.exit_code, 0) << released.err;
  EXPECT_EQ(SentinelGroup::ask(first.master(), {"EXISTS", "cli:sentinel"}).integer, 0);

  // The election on the same members.
  expect_election_round_trip(base, "cli:sentinel-election");
}

}  // namespace
}  // namespace redlock::test

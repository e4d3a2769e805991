#pragma once
// One election through the CLI on any nodes list: `redlock elect --once` leads while its
// command runs (it prints its term and sleeps), `redlock leader --json` names it
// meanwhile, and nobody leads once the command ended and the candidate resigned. The
// member-kind CLI tests run it on their own members.

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli_process.hpp"

namespace redlock::test {

inline void expect_election_round_trip(const std::vector<std::string>& base,
                                       const std::string& key) {
  auto with = [&](std::vector<std::string> args) {
    std::vector<std::string> full = base;
    full.insert(full.end(), args.begin(), args.end());
    return full;
  };
  CliProcess candidate(with({"elect", "--once", "--ttl", "5s", "--id", "cron-1", key, "--", "sh",
                             "-c", "echo $REDLOCK_TERM; sleep 2"}));
  std::string leader_out;
  for (int tries = 0; tries < 100 && leader_out.empty(); ++tries) {
    auto seen = run_cli(with({"leader", "--json", key}));
    if (seen.exit_code == 0)
      leader_out = seen.out;
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_FALSE(leader_out.empty()) << "no leader seen: " << candidate.err();
  const auto seat = nlohmann::json::parse(leader_out);
  EXPECT_EQ(seat.at("leader").at("identity"), "cron-1");
  auto elected = candidate.wait_for(std::chrono::seconds(20));
  ASSERT_TRUE(elected.has_value());
  ASSERT_EQ(elected->exit_code, 0) << elected->err;
  EXPECT_EQ(std::to_string(seat.at("leader").at("term").get<std::uint64_t>()) + "\n", elected->out);
  EXPECT_EQ(run_cli(with({"leader", key})).exit_code, 1) << "resigned when its command ended";
}

}  // namespace redlock::test

// The election's rules without I/O (core/election.hpp): the leader record's format, who
// leads given every subset of members' answers, and the order an observer reports in.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/election.hpp"

namespace redlock::core {
namespace {

using namespace std::chrono_literals;

const DriftPolicy no_drift{0.0, 0ms};

TEST(LeaderRecord, RoundTripsAnyIdentity) {
  const LeaderRecord record{"abc123", 42, "host-a:17 with spaces"};
  const auto text = format_leader_record(record);
  EXPECT_EQ(text, "abc123 42 host-a:17 with spaces");
  const auto parsed = parse_leader_record(text);
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->value, "abc123");
  EXPECT_EQ(parsed->term, 42u);
  EXPECT_EQ(parsed->identity, "host-a:17 with spaces");
}

TEST(LeaderRecord, RefusesWhatIsNotARecord) {
  for (const char* text : {"", "abc", "abc 12", " 12 id", "abc x id", "abc 0 id", "abc -1 id",
                           "abc 12x id", "abc  id"}) {
    EXPECT_FALSE(parse_leader_record(text)) << text;
  }
  // An empty identity is a record (the library never writes one, but it reads back).
  EXPECT_TRUE(parse_leader_record("abc 1 "));
}

MemberLeaderView holding(std::string value, std::chrono::milliseconds ttl, std::string record) {
  return {true, std::move(value), ttl, std::move(record)};
}

// Every subset of five members holding "v" (with its record) and the others free or
// silent: a leader exactly when at least three hold it.
TEST(DecideLeader, ALeaderExactlyWhenAQuorumHoldsItsValue) {
  for (int mask = 0; mask < 32; ++mask) {
    for (bool others_silent : {false, true}) {
      std::vector<MemberLeaderView> members;
      int holders = 0;
      for (int i = 0; i < 5; ++i) {
        if (mask & (1 << i)) {
          members.push_back(holding("v", 1000ms, "v 7 me"));
          ++holders;
        } else if (others_silent) {
          members.push_back({});
        } else {
          members.push_back(holding("", -2ms, "old 3 them"));
        }
      }
      const auto view = decide_leader(members, 3, 0ms, no_drift);
      EXPECT_EQ(view.has_value(), holders >= 3) << "mask " << mask;
      if (view) {
        EXPECT_EQ(view->identity, "me");
        EXPECT_EQ(view->term, 7u);
        EXPECT_EQ(view->value, "v");
      }
    }
  }
}

TEST(DecideLeader, TheRecordMustNameTheValueThatHoldsTheKey) {
  // A quorum holds "v", but the only records name an earlier leader: nobody is reported
  // (the new leader has not written its record yet).
  std::vector<MemberLeaderView> members{holding("v", 900ms, "old 3 them"),
                                        holding("v", 900ms, "old 3 them"), holding("v", 900ms, ""),
                                        holding("", -2ms, "")};
  EXPECT_FALSE(decide_leader(members, 3, 0ms, no_drift));
  // One member of the quorum with the record is enough: the record's quorum and the
  // holders' quorum share a member.
  members[2].record = "v 4 me";
  const auto view = decide_leader(members, 3, 0ms, no_drift);
  ASSERT_TRUE(view);
  EXPECT_EQ(view->identity, "me");
  EXPECT_EQ(view->term, 4u);
  // A record naming "v" on a member where another value holds the key does not count.
  members[2] = holding("w", 900ms, "v 4 me");
  EXPECT_FALSE(decide_leader(members, 3, 0ms, no_drift));
}

TEST(DecideLeader, ValidityIsTheQuorumthLongestTtlLessElapsedAndDrift) {
  std::vector<MemberLeaderView> members{holding("v", 1000ms, "v 1 me"), holding("v", 800ms, ""),
                                        holding("v", 600ms, ""), holding("v", 200ms, ""),
                                        holding("", -2ms, "")};
  auto view = decide_leader(members, 3, 0ms, no_drift);
  ASSERT_TRUE(view);
  EXPECT_EQ(view->validity, 600ms);
  view = decide_leader(members, 3, 50ms, {0.01, 2ms});
  ASSERT_TRUE(view);
  EXPECT_EQ(view->validity, 600ms - 50ms - 8ms);
  view = decide_leader(members, 3, 700ms, no_drift);
  ASSERT_TRUE(view);
  EXPECT_EQ(view->validity, 0ms);
}

TEST(DecideLeader, SplitHoldersLeadNobody) {
  std::vector<MemberLeaderView> members{holding("v", 900ms, "v 2 a"),
                                        holding("v", 900ms, "v 2 a"),
                                        holding("w", 900ms, "w 3 b"),
                                        holding("w", 900ms, "w 3 b"),
                                        {}};
  EXPECT_FALSE(decide_leader(members, 3, 0ms, no_drift));
}

LeaderView leader(std::uint64_t term) {
  return {"id" + std::to_string(term), term, "v" + std::to_string(term), 1000ms};
}

TEST(LeaderReports, ReportsChangesInTermOrder) {
  LeaderReports reports;
  EXPECT_TRUE(reports.should_report(std::nullopt));   // the first read, whatever it shows
  EXPECT_FALSE(reports.should_report(std::nullopt));  // no change
  EXPECT_TRUE(reports.should_report(leader(5)));
  EXPECT_FALSE(reports.should_report(leader(5)));    // the same leader
  EXPECT_FALSE(reports.should_report(leader(4)));    // a lower term: never
  EXPECT_TRUE(reports.should_report(leader(9)));     // a new leader (terms may skip)
  EXPECT_TRUE(reports.should_report(std::nullopt));  // the seat emptied, once
  EXPECT_FALSE(reports.should_report(std::nullopt));
  EXPECT_FALSE(reports.should_report(leader(8)));  // still never lower
  EXPECT_TRUE(reports.should_report(leader(9)));   // back after an empty seat
  EXPECT_TRUE(reports.should_report(leader(10)));
  EXPECT_EQ(reports.highest_term(), 10u);
}

TEST(LeaderReports, AFirstReadShowingALeaderIsReported) {
  LeaderReports reports;
  EXPECT_TRUE(reports.should_report(leader(3)));
  EXPECT_FALSE(reports.should_report(leader(3)));
}

}  // namespace
}  // namespace redlock::core

// A server's life as a client sees it (core/member_life.hpp), on a manual clock: which
// reconnects guard the member, from when, for how long, and what a first contact does
// with and without the young-member rule, and what a cluster's shard masters make of the
// member's grants (core/sharded_member_life.hpp).

#include "core/member_life.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/sharded_member_life.hpp"

namespace redlock::core {
namespace {

using namespace std::chrono_literals;

const auto t0 = Clock::time_point(10h);

std::shared_ptr<std::atomic<long long>> bound_of(std::chrono::milliseconds bound) {
  return std::make_shared<std::atomic<long long>>(bound.count());
}

MemberLife::Rules rules(bool observed, bool first_contact) {
  MemberLife::Rules r;
  r.observed = observed;
  r.first_contact = first_contact;
  r.bound = bound_of(30s);
  return r;
}

ServerIdentity server(const char* run_id, std::chrono::seconds uptime, const char* replid = "r1") {
  return {run_id, uptime, replid, "0000"};
}

TEST(MemberLife, ReadsTheIdentityFieldsOfAnInfoReply) {
  const auto identity = parse_server_identity(
      "# Server\r\nredis_version:7.0.15\r\nrun_id:abc123\r\nuptime_in_seconds:42\r\n"
      "# Replication\r\nrole:master\r\nmaster_replid:r-one\r\nmaster_replid2:r-two\r\n");
  ASSERT_TRUE(identity);
  EXPECT_EQ(identity->run_id, "abc123");
  EXPECT_EQ(identity->uptime, 42s);
  EXPECT_EQ(identity->master_replid, "r-one");
  EXPECT_EQ(identity->master_replid2, "r-two");
  EXPECT_FALSE(parse_server_identity("run_id:abc\r\n")) << "no uptime";
  EXPECT_FALSE(parse_server_identity("run_id:abc\r\nuptime_in_seconds:x1\r\n"));
  // A field whose name only starts like another is not it.
  EXPECT_FALSE(parse_server_identity("run_idx:abc\r\nuptime_in_seconds:1\r\n"));
}

TEST(MemberLife, AFirstContactIsNotGuardedByDefaultWhateverTheUptime) {
  MemberLife life(rules(true, false));
  EXPECT_FALSE(guarded(life.guard(), t0)) << "before the first connection";
  life.connected(t0);
  EXPECT_FALSE(guarded(life.guard(), t0));
  life.learned(server("a", 0s), t0);
  EXPECT_FALSE(guarded(life.guard(), t0));
}

TEST(MemberLife, AYoungMemberOnFirstContactIsGuardedUntilItsStartPlusTheBound) {
  MemberLife life(rules(true, true));
  EXPECT_TRUE(guarded(life.guard(), t0)) << "unknown before its INFO answered";
  life.connected(t0);
  life.learned(server("a", 10s), t0);
  EXPECT_TRUE(guarded(life.guard(), t0 + 20s - 1ns));
  EXPECT_FALSE(guarded(life.guard(), t0 + 20s)) << "started at t0 - 10 s, bound 30 s";
  MemberLife old(rules(true, true));
  old.connected(t0);
  old.learned(server("a", 30s), t0);
  EXPECT_FALSE(guarded(old.guard(), t0)) << "up for the whole bound already";
}

// A Sentinel group's master, promoted a moment ago, may have been up for days: with the
// young-member rule, the time its sentinel has known it as master counts, not its uptime.
TEST(MemberLife, AMasterPromotedMomentsAgoIsYoungWhateverItsUptime) {
  auto promoted = server("a", std::chrono::hours(72));
  promoted.master_for = 2s;
  MemberLife life(rules(true, true));
  life.connected(t0);
  life.learned(promoted, t0);
  EXPECT_TRUE(guarded(life.guard(), t0 + 28s - 1ns));
  EXPECT_FALSE(guarded(life.guard(), t0 + 28s)) << "master since t0 - 2 s, bound 30 s";
  EXPECT_NE(life.guard().reason.find("role-reported-time"), std::string::npos)
      << life.guard().reason;

  // A master for longer than the bound, or a server younger than its mastership (the
  // sentinel knew the address before the restart): the younger of the two counts.
  auto settled = server("a", std::chrono::hours(72));
  settled.master_for = 40s;
  MemberLife old(rules(true, true));
  old.connected(t0);
  old.learned(settled, t0);
  EXPECT_FALSE(guarded(old.guard(), t0));
  auto restarted = server("a", 5s);
  restarted.master_for = std::chrono::hours(1);
  MemberLife young(rules(true, true));
  young.connected(t0);
  young.learned(restarted, t0);
  EXPECT_TRUE(guarded(young.guard(), t0 + 25s - 1ns));
  EXPECT_FALSE(guarded(young.guard(), t0 + 25s));

  // Without the young-member rule a first contact stays unguarded, as for uptime.
  MemberLife off(rules(true, false));
  off.connected(t0);
  off.learned(promoted, t0);
  EXPECT_FALSE(guarded(off.guard(), t0));
}

TEST(MemberLife, ARunIdChangeAcrossAReconnectGuardsFromTheReconnect) {
  MemberLife life(rules(true, false));
  life.connected(t0);
  life.learned(server("a", 1000s), t0);
  life.connected(t0 + 5s);
  EXPECT_TRUE(guarded(life.guard(), t0 + 5s)) << "unknown until the new INFO";
  life.learned(server("a", 1005s), t0 + 5s);
  EXPECT_FALSE(guarded(life.guard(), t0 + 5s)) << "the same server came back";
  life.connected(t0 + 10s);
  life.learned(server("b", 0s), t0 + 10s + 3ms);
  EXPECT_TRUE(guarded(life.guard(), t0 + 40s - 1ns));
  EXPECT_FALSE(guarded(life.guard(), t0 + 40s));
  EXPECT_NE(life.guard().reason.find("run_id changed"), std::string::npos);
}

TEST(MemberLife, AReplicationIdChangeIsAFailover) {
  MemberLife life(rules(true, false));
  life.connected(t0);
  life.learned(server("a", 1000s, "r1"), t0);
  life.connected(t0 + 1s);
  life.learned(server("a", 1001s, "r2"), t0 + 1s);
  EXPECT_TRUE(guarded(life.guard(), t0 + 31s - 1ns));
  EXPECT_FALSE(guarded(life.guard(), t0 + 31s));
  EXPECT_NE(life.guard().reason.find("replication id changed"), std::string::npos);
}

// Another server whose second replication id is the one met before took over by a
// promotion, not a restart: guarded the same, and said so.
TEST(MemberLife, AnotherServerCarryingTheOldReplicationIdIsAPromotedReplica) {
  MemberLife life(rules(true, false));
  life.connected(t0);
  life.learned(server("a", 1000s, "r1"), t0);
  life.connected(t0 + 1s);
  life.learned({"b", 900s, "r2", "r1"}, t0 + 1s);
  EXPECT_TRUE(guarded(life.guard(), t0 + 31s - 1ns));
  EXPECT_FALSE(guarded(life.guard(), t0 + 31s));
  EXPECT_NE(life.guard().reason.find("promoted replica"), std::string::npos);
  life.connected(t0 + 40s);
  life.learned({"c", 0s, "r3", "0000"}, t0 + 40s);
  EXPECT_EQ(life.guard().reason.find("promoted replica"), std::string::npos)
      << "a restarted server is not a promoted replica";
}

// A cluster master that appeared after the client met the member (a promoted replica):
// whatever its uptime, the writes the member granted may not have reached it.
TEST(MemberLife, AServerThatAppearedLateIsGuardedFromItsAppearanceWhateverItsAge) {
  auto r = rules(true, false);
  r.who = "shard 127.0.0.1:7004: ";
  MemberLife life(std::move(r));
  life.appeared(t0);
  EXPECT_TRUE(guarded(life.guard(), t0)) << "unknown until its INFO";
  life.learned(server("b", 100'000s), t0 + 1s);
  EXPECT_TRUE(guarded(life.guard(), t0 + 30s - 1ns));
  EXPECT_FALSE(guarded(life.guard(), t0 + 30s)) << "from its appearance, not its INFO";
  EXPECT_EQ(life.guard().reason.rfind("shard 127.0.0.1:7004: became a master after", 0), 0u)
      << life.guard().reason;
  MemberLife refused(rules(true, false));
  refused.appeared(t0);
  refused.refused(t0 + 1s);
  EXPECT_TRUE(guarded(refused.guard(), t0 + 29s)) << "no INFO: taken as lacking writes";
  MemberLife off(rules(false, false));
  off.appeared(t0);
  off.learned(server("b", 1s), t0);
  EXPECT_FALSE(guarded(off.guard(), t0)) << "the observed rule off";
}

TEST(MemberLife, WithTheObservedRuleOffARestartIsNotGuarded) {
  MemberLife life(rules(false, false));
  life.connected(t0);
  life.learned(server("a", 1000s), t0);
  life.connected(t0 + 1s);
  EXPECT_FALSE(guarded(life.guard(), t0 + 1s));
  life.learned(server("b", 0s), t0 + 1s);
  EXPECT_FALSE(guarded(life.guard(), t0 + 1s));
}

TEST(MemberLife, EachGuardThatStartsOrGrowsIsToldWithItsLengthAndCause) {
  std::vector<std::pair<std::chrono::milliseconds, std::string>> told;
  auto observed = rules(true, true);
  observed.on_guarded = [&](std::chrono::milliseconds left, std::string_view why) {
    told.emplace_back(left, std::string(why));
  };
  MemberLife life(std::move(observed));
  life.connected(t0);
  life.learned(server("a", 10s), t0);  // young on first contact: 20 s left
  life.connected(t0 + 1s);
  life.learned(server("a", 11s), t0 + 1s);  // the same server: nothing new
  life.connected(t0 + 2s);
  life.learned(server("b", 0s), t0 + 2s + 500ms);  // restarted: guarded from the reconnect
  ASSERT_EQ(told.size(), 2u);
  EXPECT_EQ(told[0].first, 20s);
  EXPECT_NE(told[0].second.find("up for only 10 s"), std::string::npos);
  EXPECT_EQ(told[1].first, 29'500ms);
  EXPECT_NE(told[1].second.find("run_id changed"), std::string::npos);
  MemberLife old(rules(false, true));
  old.connected(t0);
  old.learned(server("c", 3600s), t0);
  EXPECT_FALSE(guarded(old.guard(), t0)) << "an old member is not guarded";
}

TEST(MemberLife, ARefusedInfoOnAReconnectIsTakenForARestart) {
  MemberLife life(rules(true, false));
  life.connected(t0);
  life.learned(server("a", 1000s), t0);
  life.connected(t0 + 1s);
  life.refused(t0 + 1s);
  EXPECT_TRUE(guarded(life.guard(), t0 + 31s - 1ns));
  EXPECT_FALSE(guarded(life.guard(), t0 + 31s));
  MemberLife first(rules(true, false));
  first.connected(t0);
  first.refused(t0);
  EXPECT_FALSE(guarded(first.guard(), t0)) << "a first contact without the young rule";
}

// A server that refuses INFO (an ACL user without +info) on its first connection is met
// all the same: it cannot say it restarted, so every reconnect after it is taken for a
// restart, whether the reconnect's INFO is refused again or answered (the identity before
// is unknown, so a change cannot be ruled out). Each sequence of answers over a first
// connection and a reconnect, with the observed rule on and off.
TEST(MemberLife, AMemberWhoseInfoWasRefusedIsRememberedAndEveryReconnectGuardsIt) {
  enum class Answer { refused, answered };
  struct Case {
    Answer first;
    Answer reconnect;
    bool observed;
    bool guarded;
    const char* reason;
  };
  const Case cases[] = {
      {Answer::refused, Answer::refused, true, true, "INFO refused"},
      {Answer::refused, Answer::answered, true, true, "INFO refused on the connection before"},
      {Answer::answered, Answer::refused, true, true, "INFO refused"},
      {Answer::answered, Answer::answered, true, false, ""},
      {Answer::refused, Answer::refused, false, false, ""},
      {Answer::refused, Answer::answered, false, false, ""},
  };
  for (const auto& c : cases) {
    const std::string where = std::string(c.first == Answer::refused ? "refused" : "answered") +
                              " then " + (c.reconnect == Answer::refused ? "refused" : "answered") +
                              (c.observed ? "" : ", observed rule off");
    MemberLife life(rules(c.observed, false));
    life.connected(t0);
    if (c.first == Answer::refused) {
      life.refused(t0);
    } else {
      life.learned(server("a", 1000s), t0);
    }
    EXPECT_FALSE(guarded(life.guard(), t0)) << where << ": a first contact";
    life.connected(t0 + 5s);
    if (c.observed) {
      EXPECT_TRUE(guarded(life.guard(), t0 + 5s)) << where << ": unknown until INFO";
    }
    if (c.reconnect == Answer::refused) {
      life.refused(t0 + 5s + 2ms);
    } else {
      life.learned(server("a", 1005s), t0 + 5s + 2ms);
    }
    EXPECT_EQ(guarded(life.guard(), t0 + 35s - 1ns), c.guarded) << where;
    EXPECT_FALSE(guarded(life.guard(), t0 + 35s)) << where << ": from the reconnect";
    EXPECT_NE(life.guard().reason.find(c.reason), std::string::npos)
        << where << ": " << life.guard().reason;
    // Answered on two reconnects after that: the first follows a refusal when the
    // reconnect's INFO was refused, the second meets the server it met before.
    life.connected(t0 + 40s);
    life.learned(server("a", 1040s), t0 + 40s);
    EXPECT_EQ(guarded(life.guard(), t0 + 40s), c.observed && c.reconnect == Answer::refused)
        << where;
    life.connected(t0 + 80s);
    life.learned(server("a", 1080s), t0 + 80s);
    EXPECT_FALSE(guarded(life.guard(), t0 + 80s)) << where << ": the same server again";
  }
}

// A refused or unreadable INFO is told once, however many connections it refuses: it is
// a setting to fix (grant +info), not an event.
TEST(MemberLife, ARefusedInfoIsToldOnceNamingTheServer) {
  std::vector<std::string> told;
  auto r = rules(true, false);
  r.who = "shard 127.0.0.1:7004: ";
  r.on_misconfigured = [&](std::string_view why) { told.emplace_back(why); };
  MemberLife life(std::move(r));
  life.connected(t0);
  life.refused(t0);
  life.connected(t0 + 1s);
  life.refused(t0 + 1s);
  life.connected(t0 + 2s);
  life.refused(t0 + 2s);
  ASSERT_EQ(told.size(), 1u);
  EXPECT_EQ(told[0].rfind("shard 127.0.0.1:7004: INFO refused", 0), 0u) << told[0];
  EXPECT_NE(told[0].find("+info"), std::string::npos) << told[0];
}

// Two members of one client whose servers answer with one run_id are one server named
// twice (localhost and 127.0.0.1): the one whose INFO came later does not count while
// both have it, whichever its place in the nodes, and says so once, naming the other.
struct TwoMembers {
  std::shared_ptr<ServerRegistry> registry = std::make_shared<ServerRegistry>();
  std::vector<std::string> told;
  std::unique_ptr<MemberLife> first;
  std::unique_ptr<MemberLife> second;
  TwoMembers() {
    first = std::make_unique<MemberLife>(member(0, "redis://localhost:7000"));
    second = std::make_unique<MemberLife>(member(1, "redis://127.0.0.1:7000"));
  }
  MemberLife::Rules member(int index, std::string url) {
    auto r = rules(true, false);
    r.registry = registry;
    r.member = index;
    r.url = std::move(url);
    r.on_misconfigured = [this](std::string_view why) { told.emplace_back(why); };
    return r;
  }
};

TEST(MemberLife, TheLaterOfTwoMembersReachingOneServerDoesNotCount) {
  for (const bool later_is_second : {true, false}) {
    TwoMembers two;
    auto& earlier = later_is_second ? *two.first : *two.second;
    auto& later = later_is_second ? *two.second : *two.first;
    earlier.connected(t0);
    later.connected(t0);
    earlier.learned(server("same", 1000s), t0);
    EXPECT_FALSE(guarded(earlier.guard(), t0));
    later.learned(server("same", 1000s), t0 + 1ms);
    EXPECT_FALSE(guarded(earlier.guard(), t0 + 1h)) << "the first one counts";
    EXPECT_TRUE(guarded(later.guard(), t0 + 1h)) << "for as long as both reach one server";
    EXPECT_EQ(later.guard().same_server_as, earlier.rules().url);
    EXPECT_NE(guarded_detail(later.guard(), t0).find("the same server as " + earlier.rules().url),
              std::string::npos)
        << guarded_detail(later.guard(), t0);
    ASSERT_EQ(two.told.size(), 1u);
    EXPECT_NE(two.told[0].find(earlier.rules().url), std::string::npos) << two.told[0];
    EXPECT_NE(two.told[0].find("run_id same"), std::string::npos) << two.told[0];
    // Reconnects to the same server change nothing, and are not told again.
    later.connected(t0 + 2s);
    later.learned(server("same", 1002s), t0 + 2s);
    earlier.connected(t0 + 3s);
    earlier.learned(server("same", 1003s), t0 + 3s);
    EXPECT_FALSE(guarded(earlier.guard(), t0 + 1h));
    EXPECT_TRUE(guarded(later.guard(), t0 + 1h));
    EXPECT_EQ(two.told.size(), 1u);
  }
}

TEST(MemberLife, MembersOnDistinctServersOrOneMemberAloneAllCount) {
  TwoMembers two;
  two.first->connected(t0);
  two.first->learned(server("a", 1000s), t0);
  two.second->connected(t0);
  two.second->learned(server("b", 1000s), t0);
  EXPECT_FALSE(guarded(two.first->guard(), t0));
  EXPECT_FALSE(guarded(two.second->guard(), t0));
  // The second's server replaced by the first's (a URL that now reaches it): found out
  // once its INFO answers, after the guard of its restart.
  two.second->connected(t0 + 1s);
  two.second->learned(server("a", 1001s), t0 + 1s);
  EXPECT_TRUE(guarded(two.second->guard(), t0 + 1h));
  EXPECT_FALSE(guarded(two.first->guard(), t0 + 1h));
  // And counts again when it reaches a server of its own.
  two.second->connected(t0 + 2s);
  two.second->learned(server("c", 0s), t0 + 2s);
  EXPECT_EQ(two.second->guard().same_server_as, "");
  EXPECT_FALSE(guarded(two.second->guard(), t0 + 32s));
  // The first gone: nothing left to compare with.
  two.second->connected(t0 + 40s);
  two.second->learned(server("a", 0s), t0 + 40s);
  EXPECT_TRUE(guarded(two.second->guard(), t0 + 1h));
  two.first.reset();
  EXPECT_FALSE(guarded(two.second->guard(), t0 + 1h));
}

TEST(MemberLife, TheBoundIsReadWhenTheGuardStartsSoALongerTtlRaisedItInTime) {
  auto r = rules(true, false);
  auto bound = bound_of(30s);
  r.bound = bound;
  MemberLife life(r);
  life.connected(t0);
  life.learned(server("a", 1000s), t0);
  bound->store(60'000);
  life.connected(t0 + 1s);
  life.learned(server("b", 0s), t0 + 1s);
  EXPECT_TRUE(guarded(life.guard(), t0 + 61s - 1ns));
  EXPECT_FALSE(guarded(life.guard(), t0 + 61s));
}

// A guard that started before the bound grew lasts the new bound from its start: the
// member may have lost locks as long as the longest ttl this client now knows of.
TEST(MemberLife, AGuardStartedBeforeTheBoundGrewLastsTheNewBound) {
  auto r = rules(true, false);
  auto bound = bound_of(30s);
  r.bound = bound;
  MemberLife life(r);
  life.connected(t0);
  life.learned(server("a", 1000s), t0);
  life.connected(t0 + 1s);
  life.learned(server("b", 0s), t0 + 1s);  // restarted: guarded until t0 + 31 s
  EXPECT_TRUE(guarded(life.guard(), t0 + 31s - 1ns));
  bound->store(60'000);
  EXPECT_TRUE(guarded(life.guard(), t0 + 61s - 1ns)) << "stretched to the new bound";
  EXPECT_FALSE(guarded(life.guard(), t0 + 61s));
  // A bound that shrinks (it never does: it is raised only) would not shorten it.
  bound->store(10'000);
  EXPECT_TRUE(guarded(life.guard(), t0 + 61s - 1ns));
}

// An INFO that timed out, or whose connection failed, says nothing of the server's start
// and changes no guard; the server is silent until it answers or a connection is ready.
TEST(MemberLife, AnInfoWithoutAnswerLeavesTheServerSilentUntilItsNextAnswerOrConnection) {
  MemberLife life(rules(true, false));
  life.connected(t0);
  life.fell_silent();
  EXPECT_TRUE(life.silent());
  EXPECT_FALSE(guarded(life.guard(), t0)) << "silence is not a restart";
  life.learned(server("a", 1000s), t0 + 1s);
  EXPECT_FALSE(life.silent());
  life.fell_silent();
  life.connected(t0 + 2s);
  EXPECT_FALSE(life.silent());
  EXPECT_TRUE(guarded(life.guard(), t0 + 2s)) << "unknown until the reconnect's INFO";
  life.fell_silent();
  life.refused(t0 + 3s);
  EXPECT_FALSE(life.silent());
}

// An INFO may be answered before its connection is reported ready (a shard master asked
// when the router met it): a guard taken at the connection then starts at the answer, not
// at some time long past.
TEST(MemberLife, AGuardAtTheConnectionStartsAtTheAnswerWhenNoConnectionWasReported) {
  MemberLife life(rules(true, true));
  life.refused(t0);
  EXPECT_TRUE(guarded(life.guard(), t0 + 30s - 1ns));
  EXPECT_FALSE(guarded(life.guard(), t0 + 30s));
}

// A cluster's masters: a grant counts by the guard of the shard that gave it, and the
// other shards' as far as they own slots, are guarded, or have not said who they are
// without being found silent.
TEST(ShardedMemberLife, AShardsRestartGuardsTheMemberWhileItOwnsSlots) {
  ShardedMemberLife lives;
  const auto one = lives.met("127.0.0.1:7001");
  const auto two = lives.met("127.0.0.1:7002");
  EXPECT_EQ(lives.life(one), nullptr) << "no life before start";
  EXPECT_FALSE(guarded(lives.guard(), t0));
  lives.start(rules(true, false), t0);
  ASSERT_NE(lives.life(one), nullptr);
  lives.life(one)->learned(server("a", 1000s), t0);
  lives.life(two)->learned(server("b", 1000s), t0);
  EXPECT_FALSE(guarded(lives.guard(), t0));
  lives.ready(two, t0 + 1s);
  EXPECT_TRUE(guarded(lives.guard_for(one), t0 + 1s)) << "shard two has not said who it is";
  lives.life(two)->fell_silent();
  EXPECT_FALSE(guarded(lives.guard_for(one), t0 + 1s)) << "a silent shard grants nothing";
  EXPECT_TRUE(guarded(lives.guard_for(two), t0 + 1s)) << "its own grants wait for its answer";
  EXPECT_TRUE(guarded(lives.guard(), t0 + 1s)) << "the answering shard unknown";
  lives.life(two)->learned(server("c", 0s), t0 + 2s);
  EXPECT_TRUE(guarded(lives.guard_for(one), t0 + 31s - 1ns)) << "restarted: its slots may move";
  EXPECT_EQ(lives.guard_for(one).reason.rfind("shard 127.0.0.1:7002: run_id changed", 0), 0u)
      << lives.guard_for(one).reason;
  lives.left(two);
  EXPECT_FALSE(guarded(lives.guard_for(one), t0 + 2s)) << "no slots, no keys";
  EXPECT_TRUE(guarded(lives.guard_for(two), t0 + 2s)) << "its own grants still wait";
  lives.regained(two, t0 + 3s);
  EXPECT_TRUE(guarded(lives.guard_for(one), t0 + 3s)) << "unknown again after regaining slots";
}

TEST(ShardedMemberLife, AMasterThatAppearsLaterIsGuardedFromItsAppearance) {
  ShardedMemberLife lives;
  const auto one = lives.met("127.0.0.1:7001");
  lives.start(rules(true, false), t0);
  lives.life(one)->learned(server("a", 1000s), t0);
  const auto two = lives.appeared("127.0.0.1:7004", t0 + 1s);
  EXPECT_TRUE(guarded(lives.guard(), t0 + 1s));
  lives.life(two)->learned(server("b", 100'000s), t0 + 2s);
  EXPECT_TRUE(guarded(lives.guard_for(one), t0 + 31s - 1ns));
  EXPECT_FALSE(guarded(lives.guard_for(one), t0 + 31s));
  // Told before start: guarded from the start on, which is when this client saw it.
  ShardedMemberLife early;
  const auto late = early.appeared("127.0.0.1:7005", t0);
  early.start(rules(true, false), t0 + 5s);
  early.life(late)->learned(server("c", 100'000s), t0 + 6s);
  EXPECT_TRUE(guarded(early.guard(), t0 + 35s - 1ns));
  EXPECT_FALSE(guarded(early.guard(), t0 + 35s));
}

}  // namespace
}  // namespace redlock::core

// A server's life as a client sees it (core/member_life.hpp), on a manual clock: which
// reconnects guard the member, from when, for how long, and what a first contact does
// with and without the young-member rule; then every short sequence of events against a
// plain model of the rules, and the same for a cluster's shard masters
// (core/sharded_member_life.hpp).

#include "core/member_life.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
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

// Every sequence of up to five events, under each pair of rules, against a model of the
// rules written plainly. The alphabet is what a server can do between two looks at it.
enum class Event {
  connected,
  appeared,
  same,         // answers as the server met last (or a long-running one, first)
  restarted,    // another run_id, up for long: another server under the member's address
  young,        // another run_id, up for 1 s
  failed_over,  // the same run_id under another replication id
  promoted,     // another run_id carrying the old replication id second, master for 2 s
  refused,
  silent,
  half_bound,   // the clock moves by half the bound
  past_bound,   // the clock moves past the bound
  bound_grows,  // the bound doubles (a longer ttl was asked for)
  count
};
constexpr int event_kinds = static_cast<int>(Event::count);

// Under AddressSanitizer the library and this test run unoptimised and instrumented,
// about eighty times slower than in the Release suite, which enumerates the full lengths:
// one event less there (a twelfth of the sequences) still sends every event to every
// state the shorter sequences reach, and keeps the sanitized suite a minute and a half
// shorter.
#if defined(__SANITIZE_ADDRESS__)
constexpr int sanitized_shortening = 1;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr int sanitized_shortening = 1;
#else
constexpr int sanitized_shortening = 0;
#endif
#else
constexpr int sanitized_shortening = 0;
#endif

// A server as a test plays it: who it says it is on each answer.
struct Server {
  ServerIdentity now{"a", 100'000s, "r1", "0000", std::nullopt};
  int next = 0;
  ServerIdentity answer(Event event) {
    const std::string fresh = std::to_string(++next);
    switch (event) {
      case Event::restarted:
        now = {"run" + fresh, 100'000s, "repl" + fresh, "0000", std::nullopt};
        break;
      case Event::young:
        now = {"run" + fresh, 1s, "repl" + fresh, "0000", std::nullopt};
        break;
      case Event::failed_over:
        now = {now.run_id, now.uptime, "repl" + fresh, now.master_replid, std::nullopt};
        break;
      case Event::promoted:
        now = {"run" + fresh, 100'000s, "repl" + fresh, now.master_replid, 2000ms};
        break;
      default:
        now.master_for.reset();
        break;
    }
    return now;
  }
};

// The rules, one at a time, in the words of core/member_life.hpp.
struct Model {
  bool observed;
  bool first_contact;
  bool met = false;       // remembered from its first answer or refusal on
  bool appeared = false;  // joined the member after this client met it
  bool known;             // its grants wait for an answer
  bool silent = false;
  std::optional<ServerIdentity> last;  // none: the last INFO was refused
  std::optional<Clock::time_point> connection;
  std::optional<Clock::time_point> guard_start;
  std::string why;
  int refusals_told = 0;
  int guards_told = 0;

  Model(bool observed_rule, bool first_contact_rule)
      : observed(observed_rule), first_contact(first_contact_rule), known(!first_contact_rule) {}

  // Guards run for the bound from their start; the later start outlasts the earlier.
  void guard_from(Clock::time_point start, const char* reason, Clock::time_point now,
                  std::chrono::milliseconds bound) {
    if (guard_start && start <= *guard_start) return;
    guard_start = start;
    why = reason;
    if (start + bound > now) ++guards_told;
  }
  Clock::time_point until(std::chrono::milliseconds bound) const {
    return guard_start ? *guard_start + bound : Clock::time_point::min();
  }

  void connected(Clock::time_point now) {
    connection = now;
    silent = false;
    // A reconnect may reach another server; a first contact matters to the young rule only.
    if (met ? observed : first_contact) known = false;
  }
  void appeared_at(Clock::time_point now) {
    connection = now;
    silent = false;
    if (!observed) return;
    appeared = true;
    known = false;
  }
  void answered(const ServerIdentity& id, Clock::time_point now, std::chrono::milliseconds bound) {
    silent = false;
    known = true;
    const auto from = connection.value_or(now);
    if (!met) {
      if (appeared) {
        guard_from(from, "became a master after", now, bound);
      } else if (first_contact) {
        const bool by_role = id.master_for && *id.master_for < id.uptime;
        const auto age = by_role ? *id.master_for : std::chrono::milliseconds(id.uptime);
        if (age < bound) {
          guard_from(now - age, by_role ? "master for only" : "up for only", now, bound);
        }
      }
    } else if (observed) {
      if (!last) {
        guard_from(from, "INFO refused on the connection before", now, bound);
      } else if (id.run_id != last->run_id) {
        const bool promoted =
            !last->master_replid.empty() && id.master_replid2 == last->master_replid;
        guard_from(from,
                   promoted ? "promoted replica" : "run_id changed across a reconnect: restarted",
                   now, bound);
      } else if (id.master_replid != last->master_replid) {
        guard_from(from, "replication id changed", now, bound);
      }
    }
    met = true;
    last = id;
  }
  void refused(Clock::time_point now, std::chrono::milliseconds bound) {
    silent = false;
    known = true;
    const bool guards = met || appeared ? observed : first_contact;
    if (guards) guard_from(connection.value_or(now), "INFO refused, so", now, bound);
    met = true;
    last.reset();
    if (observed || first_contact) refusals_told = 1;
  }
};

std::string spelled(const std::vector<Event>& events) {
  static const char* const names[] = {"connected", "appeared",    "same",       "restarted",
                                      "young",     "failed_over", "promoted",   "refused",
                                      "silent",    "half_bound",  "past_bound", "bound_grows"};
  std::string text;
  for (const auto event : events) text += std::string(names[static_cast<int>(event)]) + " ";
  return text;
}

TEST(MemberLife, EverySequenceOfFiveEventsFollowsTheRules) {
  constexpr int length = 5 - sanitized_shortening;
  int sequences = 0;
  int failures = 0;
  const auto began = std::chrono::steady_clock::now();
  std::vector<Event> events(length);
  int total = 1;
  for (int i = 0; i < length; ++i) total *= event_kinds;
  for (const bool observed : {true, false}) {
    for (const bool first_contact : {true, false}) {
      for (int code = 0; code < total; ++code) {
        for (int i = 0, rest = code; i < length; ++i, rest /= event_kinds) {
          events[i] = static_cast<Event>(rest % event_kinds);
        }
        ++sequences;
        auto bound = bound_of(30s);
        int refusals_told = 0;
        int guards_told = 0;
        auto r = rules(observed, first_contact);
        r.bound = bound;
        r.on_misconfigured = [&](std::string_view) { ++refusals_told; };
        r.on_guarded = [&](std::chrono::milliseconds left, std::string_view why) {
          ++guards_told;
          if (left <= 0ms || why.empty()) ++failures;
        };
        MemberLife life(std::move(r));
        Model model(observed, first_contact);
        Server server;
        auto now = t0;
        for (int step = 0; step < length; ++step) {
          const auto span = std::chrono::milliseconds(bound->load());
          switch (events[step]) {
            case Event::connected:
              life.connected(now);
              model.connected(now);
              break;
            case Event::appeared:
              life.appeared(now);
              model.appeared_at(now);
              break;
            case Event::same:
            case Event::restarted:
            case Event::young:
            case Event::failed_over:
            case Event::promoted: {
              const auto identity = server.answer(events[step]);
              life.learned(identity, now);
              model.answered(identity, now, span);
              break;
            }
            case Event::refused:
              life.refused(now);
              model.refused(now, span);
              break;
            case Event::silent:
              life.fell_silent();
              model.silent = true;
              break;
            case Event::half_bound:
              now += span / 2;
              break;
            case Event::past_bound:
              now += span + 1ms;
              break;
            case Event::bound_grows:
              bound->store(2 * bound->load());
              break;
            case Event::count:
              break;
          }
          const auto span_now = std::chrono::milliseconds(bound->load());
          const MemberGuard& guard = life.guard();
          const auto until = model.until(span_now);
          const bool model_guarded = !model.known || now < until;
          const bool ok = guard.known == model.known && guard.until == until &&
                          guarded(guard, now) == model_guarded && life.silent() == model.silent &&
                          refusals_told == model.refusals_told &&
                          guards_told == model.guards_told &&
                          (!(guard.known && now < guard.until) ||
                           guard.reason.find(model.why) != std::string::npos);
          if (!ok && ++failures <= 5) {
            ADD_FAILURE() << "rules observed " << observed << ", first_contact " << first_contact
                          << ": " << spelled({events.begin(), events.begin() + step + 1})
                          << "\n  known " << guard.known << " (model " << model.known << "), until "
                          << (guard.until - t0).count() << " ns (model " << (until - t0).count()
                          << "), silent " << life.silent() << " (model " << model.silent
                          << "), refusals told " << refusals_told << " (model "
                          << model.refusals_told << "), guards told " << guards_told << " (model "
                          << model.guards_told << "), reason '" << guard.reason << "' (model '"
                          << model.why << "')";
          }
        }
      }
    }
  }
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - began);
  EXPECT_EQ(failures, 0);
  RecordProperty("sequences", sequences);
  std::cout << sequences << " sequences of " << length << " events in " << took.count() << " ms\n";
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

// Every sequence of `length` events over `shards` shards, with the last met with the
// member or appeared later, against the combination written plainly over each shard's own
// life.
enum class ShardEvent { ready, left, regained, same, restarted, refused, silent, count };
constexpr int shard_event_kinds = static_cast<int>(ShardEvent::count);

void every_shard_sequence(const int shards, const int length) {
  // Per shard its events, then the clock by half the bound and past it.
  const int kinds = shards * shard_event_kinds + 2;
  int total = 1;
  for (int i = 0; i < length; ++i) total *= kinds;
  int sequences = 0;
  int failures = 0;
  const auto began = std::chrono::steady_clock::now();
  const auto span = 30s;
  for (const bool last_appeared : {false, true}) {
    for (const bool first_contact : {false, true}) {
      for (int code = 0; code < total; ++code) {
        ++sequences;
        ShardedMemberLife lives;
        std::vector<std::unique_ptr<MemberLife>> reference;
        std::vector<bool> owns(shards, true);
        std::vector<Server> servers(shards);
        std::vector<ShardedMemberLife::Shard> ids;
        const auto address = [](int shard) { return "127.0.0.1:" + std::to_string(7001 + shard); };
        for (int i = 0; i + 1 < shards; ++i) ids.push_back(lives.met(address(i)));
        if (!last_appeared) ids.push_back(lives.met(address(shards - 1)));
        lives.start(rules(true, first_contact), t0);
        if (last_appeared) ids.push_back(lives.appeared(address(shards - 1), t0));
        for (int i = 0; i < shards; ++i) {
          reference.push_back(std::make_unique<MemberLife>(rules(true, first_contact)));
        }
        if (last_appeared) reference[shards - 1]->appeared(t0);
        auto now = t0;
        std::string trail;
        for (int step = 0, rest = code; step < length; ++step, rest /= kinds) {
          const int symbol = rest % kinds;
          if (symbol >= shards * shard_event_kinds) {
            now += symbol == shards * shard_event_kinds ? span / 2 : span + 1ms;
            trail += symbol == shards * shard_event_kinds ? "half_bound " : "past_bound ";
          } else {
            const int shard = symbol / shard_event_kinds;
            const auto event = static_cast<ShardEvent>(symbol % shard_event_kinds);
            MemberLife& ours = *lives.life(ids[shard]);
            MemberLife& theirs = *reference[shard];
            static const char* const names[] = {"ready",     "left",    "regained", "same",
                                                "restarted", "refused", "silent"};
            trail += std::to_string(shard) + ":" + names[static_cast<int>(event)] + " ";
            switch (event) {
              case ShardEvent::ready:
                lives.ready(ids[shard], now);
                theirs.connected(now);
                break;
              case ShardEvent::left:
                lives.left(ids[shard]);
                owns[shard] = false;
                break;
              case ShardEvent::regained:
                lives.regained(ids[shard], now);
                owns[shard] = true;
                theirs.connected(now);
                break;
              case ShardEvent::same:
              case ShardEvent::restarted: {
                const auto identity = servers[shard].answer(
                    event == ShardEvent::same ? Event::same : Event::restarted);
                ours.learned(identity, now);
                theirs.learned(identity, now);
                break;
              }
              case ShardEvent::refused:
                ours.refused(now);
                theirs.refused(now);
                break;
              case ShardEvent::silent:
                ours.fell_silent();
                theirs.fell_silent();
                break;
              case ShardEvent::count:
                break;
            }
          }
          // A grant `answered` gave (-1: which shard is not known) waits while its own shard
          // is guarded, or another shard owning slots is guarded, or has not said who it is
          // and is not known to be silent (when the answering shard is known).
          const auto model = [&](int answered, Clock::time_point at) {
            for (int b = 0; b < shards; ++b) {
              const MemberGuard& own = reference[b]->guard();
              if (b == answered) {
                if (guarded(own, at)) return true;
                continue;
              }
              if (!owns[b]) continue;
              if (at < own.until) return true;
              if (!own.known && (answered < 0 || !reference[b]->silent())) return true;
            }
            return false;
          };
          for (int answered = -1; answered < shards; ++answered) {
            const MemberGuard& guard =
                answered < 0 ? lives.guard() : lives.guard_for(ids[answered]);
            for (const auto at : {now, now + span / 2, now + span + 1ms}) {
              const bool reason_given = !(guard.known && at < guard.until) || !guard.reason.empty();
              if ((guarded(guard, at) != model(answered, at) || !reason_given) && ++failures <= 5) {
                ADD_FAILURE()
                    << "last shard " << (last_appeared ? "appeared" : "met") << ", first_contact "
                    << first_contact << ": " << trail << "\n  the grant of shard " << answered
                    << " at +"
                    << std::chrono::duration_cast<std::chrono::milliseconds>(at - now).count()
                    << " ms: guarded " << guarded(guard, at) << " (model " << model(answered, at)
                    << "), reason '" << guard.reason << "'";
              }
            }
          }
        }
      }
    }
  }
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - began);
  EXPECT_EQ(failures, 0);
  std::cout << sequences << " sequences of " << length << " events over " << shards << " shards in "
            << took.count() << " ms\n";
}

TEST(ShardedMemberLife, EverySequenceOfFourEventsOverTwoShardsCombinesTheirGuards) {
  every_shard_sequence(2, 4 - sanitized_shortening);
}

TEST(ShardedMemberLife, EverySequenceOfThreeEventsOverThreeShardsCombinesTheirGuards) {
  every_shard_sequence(3, 3 - sanitized_shortening);
}

}  // namespace
}  // namespace redlock::core

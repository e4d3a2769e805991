// The counting rule for members that may have lost keys (core/member_guard.hpp), through
// the quorum round into the acquisition machine, for every kind of lock, on a manual
// clock: a guarded member's grant never makes up a quorum, its refusal counts as a
// refusal, and the guard ends exactly at its time.

#include "core/member_guard.hpp"

#include <gtest/gtest.h>

#include <array>
#include <memory>

#include "core/acquisition.hpp"
#include "core/semaphore_quorum.hpp"

namespace redlock::core {
namespace {

using namespace std::chrono_literals;
using Step = AcquireAction::Step;

// A kind as this rule sees it: its quorum, and whether a waiter sleeps on a holder.
struct KindQuorum {
  const char* name;
  int quorum;
  bool sleeps_on_holder;
};

// Each kind's quorum on five nodes (client/kinds/kind.hpp): a majority, except the
// semaphore's, which grows with its permits.
const std::array<KindQuorum, 6> kinds{{
    {"exclusive", 3, true},
    {"permit (2 permits)", semaphore_quorum(5, 2), true},
    {"permit (3 permits)", semaphore_quorum(5, 3), true},
    {"reader", 3, true},
    {"writer", 3, true},
    {"key_set", 3, false},
}};

RandomSource fixed_random() {
  auto state = std::make_shared<std::uint64_t>(7);
  return [state] { return *state = *state * 6364136223846793005ULL + 1442695040888963407ULL; };
}

const auto t0 = Clock::time_point(1h);

MemberGuard guarded_until(Clock::time_point until) {
  MemberGuard guard;
  guard.until = until;
  guard.reason = "restarted";
  return guard;
}

TEST(MemberGuard, AGuardedGrantIsUncountedAndEveryOtherVoteIsKept) {
  const auto guard = guarded_until(t0 + 10s);
  EXPECT_EQ(counted_vote(Vote::granted, guard, t0), Vote::uncounted);
  EXPECT_EQ(counted_vote(Vote::refused, guard, t0), Vote::refused);
  EXPECT_EQ(counted_vote(Vote::failed, guard, t0), Vote::failed);
  EXPECT_EQ(counted_vote(Vote::granted, MemberGuard{}, t0), Vote::granted);
}

TEST(MemberGuard, TheGuardEndsExactlyOnTime) {
  const auto guard = guarded_until(t0 + 10s);
  EXPECT_TRUE(guarded(guard, t0 + 10s - 1ns));
  EXPECT_FALSE(guarded(guard, t0 + 10s));
  EXPECT_EQ(counted_vote(Vote::granted, guard, t0 + 10s - 1ns), Vote::uncounted);
  EXPECT_EQ(counted_vote(Vote::granted, guard, t0 + 10s), Vote::granted);
}

TEST(MemberGuard, AnUnknownMemberIsGuardedWhateverItsTime) {
  MemberGuard unknown;
  unknown.known = false;
  EXPECT_TRUE(guarded(unknown, Clock::time_point::max()));
  EXPECT_EQ(counted_vote(Vote::granted, unknown, t0), Vote::uncounted);
}

TEST(MemberGuard, AMemberReachingTheSameServerAsAnotherIsGuardedWhateverItsTime) {
  MemberGuard twice;
  twice.same_server_as = "redis://127.0.0.1:7000";
  EXPECT_TRUE(guarded(twice, Clock::time_point::max()));
  EXPECT_EQ(counted_vote(Vote::granted, twice, t0), Vote::uncounted);
  EXPECT_EQ(counted_vote(Vote::refused, twice, t0), Vote::refused);
}

// With replicas_to_ack = R, a grant counts only when at least R replicas acknowledged
// it; refusals and failures are not judged by acknowledgements, and none required means
// the grant counts as before.
TEST(MemberGuard, AGrantTooFewReplicasAcknowledgedIsUncounted) {
  const MemberGuard open;
  EXPECT_EQ(counted_vote(Vote::granted, open, ReplicaAcks{1, 0}, t0), Vote::uncounted);
  EXPECT_EQ(counted_vote(Vote::granted, open, ReplicaAcks{2, 1}, t0), Vote::uncounted);
  EXPECT_EQ(counted_vote(Vote::granted, open, ReplicaAcks{2, 2}, t0), Vote::granted);
  EXPECT_EQ(counted_vote(Vote::granted, open, ReplicaAcks{1, 3}, t0), Vote::granted);
  EXPECT_EQ(counted_vote(Vote::granted, open, ReplicaAcks{0, 0}, t0), Vote::granted);
  EXPECT_EQ(counted_vote(Vote::refused, open, ReplicaAcks{1, 0}, t0), Vote::refused);
  EXPECT_EQ(counted_vote(Vote::failed, open, ReplicaAcks{1, 0}, t0), Vote::failed);
}

// Enough acknowledgements do not lift a guard: a member that changed identity may be a
// replica that none of the acknowledged grants reached (docs/safety.md).
TEST(MemberGuard, AcknowledgementsDoNotLiftAGuard) {
  const auto guard = guarded_until(t0 + 10s);
  EXPECT_EQ(counted_vote(Vote::granted, guard, ReplicaAcks{1, 1}, t0), Vote::uncounted);
  EXPECT_EQ(counted_vote(Vote::granted, guard, ReplicaAcks{1, 1}, t0 + 10s), Vote::granted);
}

// Three grants of five on a quorum of three, one of them not acknowledged, and two
// members down: no quorum, and unreachable, not a conflict (the grant is no refusal).
TEST(MemberGuard, AQuorumThatNeedsAnUnacknowledgedGrantIsUnreachable) {
  QuorumRound round(5, 3);
  const MemberGuard open;
  round.record(0, counted_vote(Vote::granted, open, ReplicaAcks{1, 1}, t0));
  round.record(1, counted_vote(Vote::granted, open, ReplicaAcks{1, 1}, t0));
  round.record(2, counted_vote(Vote::granted, open, ReplicaAcks{1, 0}, t0));
  round.record(3, counted_vote(Vote::failed, open, ReplicaAcks{1, 0}, t0));
  round.record(4, counted_vote(Vote::failed, open, ReplicaAcks{1, 0}, t0));
  EXPECT_EQ(round.decision(), Decision::impossible);
  EXPECT_EQ(round.failure_kind(), FailureKind::unreachable);
  EXPECT_EQ(round.uncounted(), 1);
}

enum class Answer { granted, held, failed };

struct Pattern {
  std::array<Answer, 5> answers;
  int guarded_mask;
};

// The round of `pattern` at `now`, every member in `guarded_mask` guarded until t0 + 10s.
QuorumRound round_of(const Pattern& pattern, int quorum, Clock::time_point now) {
  QuorumRound round(5, quorum);
  for (int node = 0; node < 5; ++node) {
    const auto answer = pattern.answers[static_cast<std::size_t>(node)];
    const auto vote = answer == Answer::granted ? Vote::granted
                      : answer == Answer::held  ? Vote::refused
                                                : Vote::failed;
    const auto guard = (pattern.guarded_mask >> node) & 1 ? guarded_until(t0 + 10s) : MemberGuard{};
    round.record(node, counted_vote(vote, guard, now));
  }
  return round;
}

AttemptFacts facts_of(const QuorumRound& round, Clock::time_point started) {
  AttemptFacts facts;
  facts.decision = round.decision();
  facts.failure = round.failure_kind();
  facts.started = started;
  facts.holder_on_quorum = round.refusals() >= round.quorum();
  return facts;
}

// Every answer over five nodes x every set of guarded members x every kind: the machine
// hands the lock out iff the unguarded grants alone reach the kind's quorum; a failure
// is a conflict iff the refusals (guarded members' included) made the difference, i.e.
// the members neither failing nor guarded-granting could still form a quorum. Then the
// same answers a moment before the guard ends change nothing, and at its end exactly
// every grant counts.
TEST(MemberGuard, EveryPatternAndGuardSetCountsOnlyUnguardedGrantsForEveryKind) {
  int checked = 0;
  for (const auto& kind : kinds) {
    for (int code = 0; code < 243; ++code) {
      Pattern pattern{};
      for (int node = 0, rest = code; node < 5; ++node, rest /= 3) {
        pattern.answers[static_cast<std::size_t>(node)] = static_cast<Answer>(rest % 3);
      }
      for (int mask = 0; mask < 32; ++mask) {
        pattern.guarded_mask = mask;
        int counted = 0;
        int all_grants = 0;
        int unavailable = 0;
        for (int node = 0; node < 5; ++node) {
          const auto answer = pattern.answers[static_cast<std::size_t>(node)];
          const bool guarded_node = (mask >> node) & 1;
          if (answer == Answer::granted) {
            ++all_grants;
            if (guarded_node)
              ++unavailable;
            else
              ++counted;
          }
          if (answer == Answer::failed) ++unavailable;
        }
        Acquisition::Config config;
        config.ttl = 30s;
        config.wait = 1h;
        config.retry = {100ms, 0ms, 0};
        config.sleeps_on_holder = kind.sleeps_on_holder;
        const std::string where = std::string(kind.name) + " pattern " + std::to_string(code) +
                                  " guarded " + std::to_string(mask);

        Acquisition machine(config, t0, fixed_random());
        ASSERT_EQ(machine.start(t0, false, true).step, Step::send_attempt);
        const auto during = round_of(pattern, kind.quorum, t0);
        ASSERT_NE(during.decision(), Decision::undecided) << where;
        EXPECT_EQ(during.uncounted(), all_grants - counted) << where;
        const auto action = machine.attempt_decided(facts_of(during, t0), t0 + 1ms, true);
        if (counted >= kind.quorum) {
          ASSERT_EQ(action.step, Step::hand_out) << where;
        } else {
          ASSERT_EQ(action.step, Step::sleep) << where;
          ASSERT_TRUE(action.release_attempt) << where << ": a guarded grant was kept";
          const auto expected =
              unavailable > 5 - kind.quorum ? AcquireCause::unreachable : AcquireCause::conflict;
          ASSERT_EQ(machine.last_failure(), expected) << where;
        }

        const auto just_before = round_of(pattern, kind.quorum, t0 + 10s - 1ns);
        ASSERT_EQ(just_before.decision(), during.decision()) << where;
        const auto at_end = round_of(pattern, kind.quorum, t0 + 10s);
        ASSERT_EQ(at_end.decision() == Decision::reached, all_grants >= kind.quorum) << where;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 6 * 243 * 32);
}

// A waiter refused only because its grants were guarded gets the lock on its first
// attempt after the guard ends, with validity counted from that attempt.
TEST(MemberGuard, AWaiterGetsTheLockOnTheFirstAttemptAfterTheGuardEnds) {
  for (const auto& kind : kinds) {
    Acquisition::Config config;
    config.ttl = 30s;
    config.wait = 1h;
    config.retry = {100ms, 0ms, 0};
    config.sleeps_on_holder = kind.sleeps_on_holder;
    Acquisition machine(config, t0, fixed_random());
    auto action = machine.start(t0, false, true);
    // Every member granted; all but quorum - 1 are guarded until t0 + 10s.
    Pattern pattern{};
    pattern.answers.fill(Answer::granted);
    pattern.guarded_mask = 0b11111 & ~((1 << (kind.quorum - 1)) - 1);
    auto now = t0;
    int attempts = 0;
    while (action.step != Step::hand_out) {
      ASSERT_LT(attempts, 1000) << kind.name;
      if (action.step == Step::send_attempt) {
        ++attempts;
        const auto round = round_of(pattern, kind.quorum, now);
        action = machine.attempt_decided(facts_of(round, now), now, true);
        if (action.step != Step::hand_out) {
          ASSERT_LT(now, t0 + 10s) << kind.name << ": a grant after the guard was not counted";
        }
        continue;
      }
      ASSERT_EQ(action.step, Step::sleep) << kind.name;
      now = action.until;
      action = machine.timer_fired(now, true);
    }
    EXPECT_GE(now, t0 + 10s) << kind.name << ": handed out during the guard";
    EXPECT_EQ(action.valid_until, valid_until(now, 30s, {})) << kind.name;
  }
}

// A member of several servers (a cluster's shard masters): every combination of three
// servers' states and every server answering (or none known), against the rule stated
// plainly: the answering server's guard in full; another server that owns slots by its
// restart or failover, by being the same server as another member's, and by not having
// said who it is unless it is silent; a server that owns no slots not at all unless it
// answered; with no server known, every server that owns slots in full.
TEST(MemberGuard, AGrantOfAMemberOfSeveralServersIsJudgedByItsOwnServerAndTheOthersGuards) {
  struct State {
    const char* name;
    MemberGuard guard;
    bool owns;
    bool silent;
  };
  MemberGuard unknown;
  unknown.known = false;
  MemberGuard restarted = guarded_until(t0 + 5s);
  MemberGuard restarted_unknown = restarted;
  restarted_unknown.known = false;
  MemberGuard ended = guarded_until(t0 - 1s);
  MemberGuard twice;
  twice.same_server_as = "redis://127.0.0.1:7000";
  const std::array<State, 9> states{{
      {"clear", MemberGuard{}, true, false},
      {"unknown", unknown, true, false},
      {"unknown and silent", unknown, true, true},
      {"restarted", restarted, true, false},
      {"restarted, unknown and silent", restarted_unknown, true, true},
      {"a guard that ended", ended, true, false},
      {"the same server as another member", twice, true, false},
      {"unknown, owning no slots", unknown, false, false},
      {"restarted, owning no slots", restarted, false, false},
  }};
  const auto applies_in_full = [](const State& state) { return guarded(state.guard, t0); };
  const auto applies_as_another = [](const State& state) {
    if (!state.owns) return false;
    if (!state.guard.same_server_as.empty() || t0 < state.guard.until) return true;
    return !state.guard.known && !state.silent;
  };
  int cases = 0;
  for (const auto& a : states) {
    for (const auto& b : states) {
      for (const auto& c : states) {
        const std::array<const State*, 3> members{&a, &b, &c};
        std::array<ServerGuard, 3> servers{};
        for (std::size_t i = 0; i < 3; ++i) {
          servers[i] = ServerGuard{&members[i]->guard, members[i]->owns, members[i]->silent};
        }
        for (std::size_t answered = 0; answered <= 3; ++answered) {
          const std::size_t answered_by = answered == 3 ? unknown_server : answered;
          bool expected = false;
          for (std::size_t i = 0; i < 3; ++i) {
            const State& state = *members[i];
            if (answered_by == unknown_server) {
              expected = expected || (state.owns && applies_in_full(state));
            } else if (i == answered_by) {
              expected = expected || applies_in_full(state);
            } else {
              expected = expected || applies_as_another(state);
            }
          }
          MemberGuard out;
          out.reason = "left from before";
          guard_of_grant(servers, answered_by, out);
          ++cases;
          EXPECT_EQ(guarded(out, t0), expected)
              << a.name << " / " << b.name << " / " << c.name << ", answered by "
              << (answered == 3 ? std::string("none known") : std::to_string(answered));
          // A guard says why.
          if (guarded(out, t0) && out.known && out.same_server_as.empty()) {
            EXPECT_FALSE(out.reason.empty());
          }
        }
      }
    }
  }
  EXPECT_EQ(cases, 9 * 9 * 9 * 4);
}

TEST(MemberGuard, AGrantInPartsIsJudgedByItsStrictestPart) {
  MemberGuard unknown;
  unknown.known = false;
  MemberGuard twice;
  twice.same_server_as = "redis://127.0.0.1:7000";
  const MemberGuard soon = guarded_until(t0 + 1s);
  const MemberGuard later = guarded_until(t0 + 5s);
  const MemberGuard clear;
  EXPECT_EQ(stricter_guard(&clear, &soon), &soon);
  EXPECT_EQ(stricter_guard(&later, &soon), &later);
  EXPECT_EQ(stricter_guard(&later, &twice), &twice);
  EXPECT_EQ(stricter_guard(&unknown, &twice), &unknown);
  EXPECT_EQ(stricter_guard(&twice, &unknown), &unknown);
  // Null is the member's own guard, which covers every server.
  EXPECT_EQ(stricter_guard(nullptr, &clear), nullptr);
  EXPECT_EQ(stricter_guard(&unknown, nullptr), nullptr);
}

}  // namespace
}  // namespace redlock::core

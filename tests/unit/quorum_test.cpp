// The quorum decision over every assignment of replies to five nodes, in every arrival
// order that matters: "acquired iff grants >= quorum", and the decision fires at the
// first reply that settles it.

#include "core/quorum.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <numeric>
#include <vector>

namespace redlock::core {
namespace {

// The four things a node can do with an acquire: grant, report another holder, time
// out, or fail with an error. Timeouts and errors both count as failures.
enum class Reply { granted, held, timeout, error };

Vote vote_of(Reply reply) {
  switch (reply) {
    case Reply::granted:
      return Vote::granted;
    case Reply::held:
      return Vote::refused;
    default:
      return Vote::failed;
  }
}

// Replays `replies` in the order `order` and returns the decision and the number of
// replies it took to reach it.
std::pair<Decision, int> replay(const std::array<Reply, 5>& replies,
                                const std::array<int, 5>& order, int quorum, QuorumRound& round) {
  for (int step = 0; step < 5; ++step) {
    const int node = order[static_cast<std::size_t>(step)];
    if (round.record(node, vote_of(replies[static_cast<std::size_t>(node)])) !=
        Decision::undecided) {
      return {round.decision(), step + 1};
    }
  }
  (void)quorum;
  return {round.decision(), 5};
}

// The earliest step at which an oracle that knows only the replies seen so far could
// tell the outcome.
int settling_step(const std::array<Reply, 5>& replies, const std::array<int, 5>& order,
                  int quorum) {
  int grants = 0;
  for (int step = 0; step < 5; ++step) {
    if (replies[static_cast<std::size_t>(order[static_cast<std::size_t>(step)])] == Reply::granted)
      ++grants;
    const int pending = 4 - step;
    if (grants >= quorum || grants + pending < quorum) return step + 1;
  }
  return 5;
}

TEST(QuorumRound, EveryAssignmentOfFiveNodesDecidesAcquiredIffGrantsReachQuorum) {
  int cases = 0;
  for (int quorum = 3; quorum <= 5; ++quorum) {
    for (int code = 0; code < 1024; ++code) {  // 4^5 assignments
      std::array<Reply, 5> replies{};
      int grants = 0;
      int failures = 0;
      for (int node = 0, rest = code; node < 5; ++node, rest /= 4) {
        replies[static_cast<std::size_t>(node)] = static_cast<Reply>(rest % 4);
        if (replies[static_cast<std::size_t>(node)] == Reply::granted) ++grants;
        if (vote_of(replies[static_cast<std::size_t>(node)]) == Vote::failed) ++failures;
      }
      // Arrival orders: the natural one, the reverse, and a rotation, so that the early
      // decision is checked at different positions.
      const std::array<std::array<int, 5>, 3> orders{
          {{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {2, 4, 1, 3, 0}}};
      for (const auto& order : orders) {
        QuorumRound round(5, quorum);
        auto [decision, replies_needed] = replay(replies, order, quorum, round);
        ASSERT_EQ(decision == Decision::reached, grants >= quorum)
            << "case " << code << " quorum " << quorum;
        ASSERT_NE(decision, Decision::undecided);
        ASSERT_EQ(replies_needed, settling_step(replies, order, quorum))
            << "case " << code << ": decided later (or earlier) than the first settling reply";
        ++cases;
      }
      (void)failures;
    }
  }
  EXPECT_EQ(cases, 3 * 1024 * 3);
}

// What a node can do with any round, the last two being "no answer" in two ways: it
// answers after every other node (a slow node: its answer arrives at its deadline as a
// timeout) or never before the round is settled.
enum class Answer { granted, held, error, timeout, pending };

// Every assignment of the five answers over five nodes, each quorum of five nodes, and
// three arrival orders (pending nodes always last, at their deadline): the round settles
// at the first answer after which its result and its cause can no longer change, and the
// cause is the one the whole assignment has: unreachable iff the nodes not failing (error,
// timeout or no answer) cannot form a quorum, contention otherwise.
TEST(QuorumRound, EveryOutcomePatternOfFiveNodesSettlesOnceItsCauseIsKnown) {
  int patterns = 0;
  for (int quorum = 3; quorum <= 5; ++quorum) {
    for (int code = 0; code < 3125; ++code) {  // 5^5 assignments
      std::array<Answer, 5> answers{};
      int grants = 0;
      int failing = 0;
      for (int node = 0, rest = code; node < 5; ++node, rest /= 5) {
        const auto answer = static_cast<Answer>(rest % 5);
        answers[static_cast<std::size_t>(node)] = answer;
        if (answer == Answer::granted) ++grants;
        if (answer != Answer::granted && answer != Answer::held) ++failing;
      }
      const auto truth = failing > 5 - quorum ? FailureKind::unreachable : FailureKind::contention;
      for (const std::array<int, 5>& order :
           {std::array<int, 5>{0, 1, 2, 3, 4}, {4, 3, 2, 1, 0}, {2, 4, 1, 3, 0}}) {
        std::vector<int> sequence;
        for (int node : order) {
          if (answers[static_cast<std::size_t>(node)] != Answer::pending) sequence.push_back(node);
        }
        for (int node : order) {
          if (answers[static_cast<std::size_t>(node)] == Answer::pending) sequence.push_back(node);
        }
        QuorumRound round(5, quorum);
        int settled_after = 0;
        int seen_grants = 0;
        int seen_failing = 0;
        int oracle_after = 0;
        for (std::size_t step = 0; step < sequence.size(); ++step) {
          const auto answer = answers[static_cast<std::size_t>(sequence[step])];
          const auto vote = answer == Answer::granted ? Vote::granted
                            : answer == Answer::held  ? Vote::refused
                                                      : Vote::failed;
          if (answer == Answer::granted) ++seen_grants;
          if (vote == Vote::failed) ++seen_failing;
          round.record(sequence[step], vote);
          const int pending = 5 - static_cast<int>(step) - 1;
          // An oracle that sees only the answers so far: the result is known when the
          // grants reach the quorum, or cannot; the cause when more answers cannot change
          // it.
          const bool result_known = seen_grants >= quorum || seen_grants + pending < quorum;
          const bool cause_known =
              seen_grants >= quorum || pending == 0 || seen_failing + pending <= 5 - quorum;
          if (oracle_after == 0 && result_known && cause_known) oracle_after = int(step) + 1;
          if (settled_after == 0 && round.settled()) settled_after = int(step) + 1;
        }
        ASSERT_EQ(settled_after, oracle_after) << "pattern " << code << " quorum " << quorum;
        ASSERT_EQ(round.decision() == Decision::reached, grants >= quorum) << "pattern " << code;
        if (round.decision() == Decision::impossible) {
          // Replayed up to the settling answer only: the cause it reports then is final.
          QuorumRound at_settle(5, quorum);
          for (int step = 0; step < settled_after; ++step) {
            const auto answer = answers[static_cast<std::size_t>(sequence[std::size_t(step)])];
            at_settle.record(sequence[std::size_t(step)], answer == Answer::granted ? Vote::granted
                                                          : answer == Answer::held  ? Vote::refused
                                                                                    : Vote::failed);
          }
          ASSERT_TRUE(at_settle.settled());
          ASSERT_EQ(at_settle.failure_kind(), truth) << "pattern " << code << " quorum " << quorum;
        }
        ++patterns;
      }
    }
  }
  EXPECT_EQ(patterns, 3 * 3125 * 3);
}

TEST(QuorumRound, OneNodeDownAndAHolderOnTheOthersIsContention) {
  // The case a waiter meets most: one of five nodes down, another owner holding the key.
  QuorumRound round(5, 3);
  round.record(0, Vote::refused);
  round.record(1, Vote::failed);
  EXPECT_EQ(round.record(2, Vote::refused), Decision::impossible);
  EXPECT_FALSE(round.settled()) << "two more failures would make it unreachable";
  round.record(3, Vote::refused);
  EXPECT_TRUE(round.settled());
  EXPECT_EQ(round.failure_kind(), FailureKind::contention);
}

TEST(QuorumRound, DecisionSticksAndLateVotesAreIgnoredForIt) {
  QuorumRound round(5, 3);
  EXPECT_EQ(round.record(0, Vote::granted, 4), Decision::undecided);
  EXPECT_EQ(round.record(1, Vote::granted, 9), Decision::undecided);
  EXPECT_EQ(round.record(2, Vote::granted, 7), Decision::reached);
  EXPECT_EQ(round.record(3, Vote::failed), Decision::reached);
  EXPECT_EQ(round.record(4, Vote::granted, 100), Decision::reached);
  EXPECT_EQ(round.grants_at_decision(), 3);
  // The token is the maximum of the grants that formed the quorum, not of late ones.
  EXPECT_EQ(round.max_token(), 9u);
}

TEST(QuorumRound, SecondVoteFromOneNodeIsIgnored) {
  QuorumRound round(3, 2);
  round.record(0, Vote::granted);
  round.record(0, Vote::granted);
  EXPECT_EQ(round.grants(), 1);
  EXPECT_EQ(round.decision(), Decision::undecided);
}

TEST(QuorumRound, ThreeFailuresOfFiveAreUnreachableNotConflict) {
  QuorumRound round(5, 3);
  round.record(0, Vote::failed);
  round.record(1, Vote::failed);
  EXPECT_EQ(round.record(2, Vote::failed), Decision::impossible);
  EXPECT_EQ(round.failure_kind(), FailureKind::unreachable);
  EXPECT_EQ(round.pending(), 2);
}

TEST(QuorumRound, HeldByAnotherOnThreeIsContention) {
  QuorumRound round(5, 3);
  round.record(0, Vote::refused);
  round.record(1, Vote::refused);
  EXPECT_EQ(round.record(2, Vote::refused), Decision::impossible);
  EXPECT_EQ(round.failure_kind(), FailureKind::contention);
}

TEST(QuorumRound, PartitionedMajorityIsUnreachableEvenWithForeignGrantsOnTheMinority) {
  // The two reachable nodes hold other clients' partial grants; the three others time out.
  QuorumRound round(5, 3);
  round.record(0, Vote::refused);
  round.record(1, Vote::refused);
  EXPECT_EQ(round.record(2, Vote::failed), Decision::impossible);
  EXPECT_FALSE(round.settled());
  round.record(3, Vote::failed);
  EXPECT_FALSE(round.settled()) << "an unreachable quorum's error lists every node";
  round.record(4, Vote::failed);
  EXPECT_TRUE(round.settled());
  EXPECT_EQ(round.failure_kind(), FailureKind::unreachable);
}

// A contended round that gives up on its stragglers (straggler_allowance) stops with
// nodes still silent. Every assignment of the five votes with some left silent, abandoned
// wherever a refusal came and no answer settled it: given up on while a quorum was still
// possible, it is a contention (other owners' refusals are why it stopped waiting);
// given up on after the answers had ruled a quorum out, its silent nodes are taken to
// fail in the proportion in which the answered nodes that did not grant failed.
TEST(QuorumRound, AnAbandonedRoundsCauseDependsOnWhetherAQuorumWasStillPossible) {
  constexpr int kinds = 5;  // granted, refused, failed, uncounted, silent
  int still_possible = 0;
  int ruled_out = 0;
  for (int quorum = 1; quorum <= 5; ++quorum) {
    for (int code = 0; code < kinds * kinds * kinds * kinds * kinds; ++code) {
      QuorumRound round(5, quorum);
      int count[kinds] = {};
      for (int node = 0, rest = code; node < 5; ++node, rest /= kinds) {
        const int kind = rest % kinds;
        ++count[kind];
        if (kind != 4) round.record(node, static_cast<Vote>(kind));
      }
      // The straggler timer, once armed by a contended moment, fires whatever the votes
      // since: every round a refusal has reached and no answer has settled.
      if (round.settled() || round.refusals() == 0) continue;
      const bool possible = round.decision() == Decision::undecided;
      ASSERT_EQ(round.abandon_pending(), Decision::impossible) << code;
      if (possible) {
        ASSERT_EQ(round.failure_kind(), FailureKind::contention)
            << "pattern " << code << " quorum " << quorum;
        ++still_possible;
      } else {
        // failing + silent * failing / (failing + refused) > N - quorum, in reals.
        const double failing = count[2] + count[3];
        const double against = failing + count[1];
        const bool unreachable = failing + count[4] * failing / against > 5 - quorum;
        ASSERT_EQ(round.failure_kind(),
                  unreachable ? FailureKind::unreachable : FailureKind::contention)
            << "pattern " << code << " quorum " << quorum;
        ++ruled_out;
      }
    }
  }
  EXPECT_GT(still_possible, 100);
  EXPECT_GT(ruled_out, 100);
}

TEST(QuorumRound, AGuardedMajorityWithASilentNodeIsUnreachableWhenAbandoned) {
  // A key held on two nodes, two young members granting uncounted, the fifth (just
  // restarted) slow to answer. The refusals came first and armed the straggler timer;
  // the uncounted grants ruled a quorum out, but the round was not settled: the fifth
  // could still make it unreachable. The timer gives up on it: unreachable, as its
  // timeout would have said (a contention, exit 1 in the CLI, before).
  QuorumRound round(5, 3);
  round.record(1, Vote::refused);
  round.record(2, Vote::refused);
  ASSERT_TRUE(round.contended());
  round.record(3, Vote::uncounted);
  EXPECT_EQ(round.record(4, Vote::uncounted), Decision::impossible);
  ASSERT_FALSE(round.settled());
  EXPECT_EQ(round.abandon_pending(), Decision::impossible);
  EXPECT_EQ(round.failure_kind(), FailureKind::unreachable);

  // A new client with one member down: two refusals and the refused connection rule a
  // quorum out, and its two other members, still being connected, are given up on. They
  // are taken to answer as the three did, mostly refusing: a contention, not an
  // unreachable quorum (which would end a fail_fast waiter that one node down must not).
  QuorumRound one_down(5, 3);
  one_down.record(0, Vote::refused);
  one_down.record(1, Vote::refused);
  EXPECT_EQ(one_down.record(2, Vote::failed), Decision::impossible);
  ASSERT_FALSE(one_down.settled());
  one_down.abandon_pending();
  EXPECT_EQ(one_down.failure_kind(), FailureKind::contention);

  // A new client whose three other members have not answered within the allowance (their
  // connections still being made) gave up while they could still have granted: a
  // contention, so that it waits for the holder's release announcement.
  QuorumRound fresh(5, 3);
  fresh.record(0, Vote::refused);
  fresh.record(1, Vote::refused);
  ASSERT_TRUE(fresh.contended());
  fresh.abandon_pending();
  EXPECT_EQ(fresh.failure_kind(), FailureKind::contention);
  fresh.reset(5, 3);
  EXPECT_EQ(fresh.failure_kind(), FailureKind::unreachable)
      << "a reset round forgets that it was abandoned";
}

TEST(QuorumRound, QuorumOfAllNodesFailsAtTheFirstRefusal) {
  QuorumRound round(5, 5);
  round.record(0, Vote::granted);
  EXPECT_EQ(round.record(1, Vote::refused), Decision::impossible);
}

TEST(QuorumRound, AResetRoundForgetsEveryVoteAndTokenOfTheLastOne) {
  // Rounds are reused: nothing of a decided round may leak into the next one.
  QuorumRound round(5, 3);
  round.record(0, Vote::granted, 40);
  round.record(1, Vote::refused);
  round.record(2, Vote::granted, 41);
  round.record(3, Vote::granted, 42);
  ASSERT_EQ(round.decision(), Decision::reached);

  round.reset(3, 2);
  EXPECT_EQ(round.nodes(), 3);
  EXPECT_EQ(round.quorum(), 2);
  EXPECT_EQ(round.pending(), 3);
  EXPECT_EQ(round.decision(), Decision::undecided);
  EXPECT_FALSE(round.answered(0));
  EXPECT_EQ(round.record(0, Vote::granted, 5), Decision::undecided);
  EXPECT_EQ(round.record(1, Vote::refused), Decision::undecided);
  EXPECT_EQ(round.record(2, Vote::granted, 6), Decision::reached);
  EXPECT_EQ(round.grants_at_decision(), 2);
  EXPECT_EQ(round.max_token(), 6u) << "a token of the last round leaked into this one";
}

TEST(QuorumRound, SingleNode) {
  QuorumRound round(1, 1);
  EXPECT_EQ(round.record(0, Vote::granted, 1), Decision::reached);
}

}  // namespace
}  // namespace redlock::core

// The acquisition machine (core/acquisition.hpp) on a manual clock: every outcome pattern
// over five nodes, every option that shapes an acquisition, for every kind of lock (a
// kind reaches the machine only through its Config: whether a waiter sleeps on a holder's
// TTL, a writer's intent refresh, the fencing write-back), with no I/O and no sleeps.

#include "core/acquisition.hpp"

#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

namespace redlock::core {
namespace {

using namespace std::chrono_literals;
using std::chrono::milliseconds;
using Step = AcquireAction::Step;

struct KindConfig {
  const char* name;
  bool sleeps_on_holder;
  std::optional<milliseconds> refresh_within;
  bool fences;
};

// What each kind of lock gives the machine (client/kinds/kind.hpp).
const std::array<KindConfig, 5> kinds{{
    {"exclusive", true, std::nullopt, true},
    {"permit", true, std::nullopt, false},
    {"reader", true, std::nullopt, false},
    {"writer", true, 200ms, true},
    {"key_set", false, std::nullopt, true},
}};

RandomSource counter_random() {
  auto state = std::make_shared<std::uint64_t>(12345);
  return [state] { return *state = *state * 6364136223846793005ULL + 1442695040888963407ULL; };
}

Acquisition::Config config_for(const KindConfig& kind, milliseconds wait) {
  Acquisition::Config config;
  config.ttl = 10s;
  config.wait = wait;
  config.retry = {100ms, 50ms, 0};
  config.node_timeout = 50ms;
  config.sleeps_on_holder = kind.sleeps_on_holder;
  config.refresh_within = kind.refresh_within;
  return config;
}

AttemptFacts conflict_facts(Clock::time_point started, milliseconds holder_ttl = 5s) {
  AttemptFacts facts;
  facts.decision = Decision::impossible;
  facts.failure = FailureKind::contention;
  facts.started = started;
  facts.holder_on_quorum = true;
  facts.holder_expires_in = holder_ttl;
  facts.holder = "other";
  return facts;
}

AttemptFacts unreachable_facts(Clock::time_point started) {
  AttemptFacts facts;
  facts.decision = Decision::impossible;
  facts.failure = FailureKind::unreachable;
  facts.started = started;
  return facts;
}

AttemptFacts reached_facts(Clock::time_point started) {
  AttemptFacts facts;
  facts.decision = Decision::reached;
  facts.started = started;
  return facts;
}

// Drives a machine whose every attempt fails the same way, following its sleeps on a
// manual clock until it gives up or `horizon` passes. Records each attempt's time.
struct Run {
  std::vector<Clock::time_point> attempts;
  std::optional<AcquireAction> gave_up;
  Clock::time_point ended;
  bool every_failure_released = true;
};

Run drive(Acquisition& machine, Clock::time_point t0, bool unreachable, milliseconds horizon,
          milliseconds round_trip = 1ms) {
  Run run;
  auto now = t0;
  auto action = machine.start(now, false, true);
  while (now - t0 <= horizon) {
    if (action.step == Step::send_attempt) {
      run.attempts.push_back(now);
      const auto started = now;
      now += round_trip;
      action = machine.attempt_decided(
          unreachable ? unreachable_facts(started) : conflict_facts(started), now, true);
      if (!action.release_attempt) run.every_failure_released = false;
      continue;
    }
    if (action.step == Step::sleep) {
      EXPECT_GE(action.until, now) << "a sleep into the past";
      now = std::max(now, action.until);
      action = machine.timer_fired(now, true);
      continue;
    }
    if (action.step == Step::give_up) run.gave_up = action;
    break;
  }
  run.ended = now;
  return run;
}

// --- every outcome pattern --------------------------------------------------------------

enum class Answer { granted, held, error, timeout, pending };

// Every assignment of {granted, held, error, timeout, pending} over five nodes, through
// the quorum round into the machine, for every kind, waiting with fail_fast: a pattern
// whose reachable nodes can still form a quorum is a conflict that is waited out; one
// whose failing nodes leave no quorum is unreachable and ends a fail_fast acquisition.
TEST(Acquisition, EveryOutcomePatternIsClassifiedAndActedOnForEveryKind) {
  int checked = 0;
  for (const auto& kind : kinds) {
    for (int code = 0; code < 3125; ++code) {
      QuorumRound round(5, 3);
      int grants = 0;
      int failing = 0;
      std::vector<std::pair<int, Vote>> last;  // pending nodes answer last, as timeouts
      for (int node = 0, rest = code; node < 5; ++node, rest /= 5) {
        const auto answer = static_cast<Answer>(rest % 5);
        const auto vote = answer == Answer::granted ? Vote::granted
                          : answer == Answer::held  ? Vote::refused
                                                    : Vote::failed;
        if (answer == Answer::granted) ++grants;
        if (vote == Vote::failed) ++failing;
        if (answer == Answer::pending) {
          last.emplace_back(node, vote);
        } else if (!round.settled()) {
          round.record(node, vote);
        }
      }
      for (const auto& [node, vote] : last) {
        if (!round.settled()) round.record(node, vote);
      }
      ASSERT_TRUE(round.settled());
      auto config = config_for(kind, 2s);
      config.fail_fast = true;
      const auto t0 = Clock::time_point(1h);
      Acquisition machine(config, t0, counter_random());
      ASSERT_EQ(machine.start(t0, false, true).step, Step::send_attempt);
      AttemptFacts facts;
      facts.decision = round.decision();
      facts.failure = round.failure_kind();
      facts.started = t0;
      facts.holder_on_quorum = round.refusals() >= 3;
      const auto action = machine.attempt_decided(facts, t0 + 1ms, true);
      if (grants >= 3) {
        ASSERT_EQ(action.step, Step::hand_out) << kind.name << " pattern " << code;
        ASSERT_EQ(action.valid_until, valid_until(t0, 10s, {}));
      } else if (failing > 2) {
        ASSERT_EQ(action.step, Step::give_up) << kind.name << " pattern " << code;
        ASSERT_EQ(action.cause, AcquireCause::unreachable);
        ASSERT_TRUE(action.release_attempt);
      } else {
        ASSERT_EQ(action.step, Step::sleep) << kind.name << " pattern " << code;
        ASSERT_EQ(machine.last_failure(), AcquireCause::conflict);
        ASSERT_TRUE(action.release_attempt);
      }
      ++checked;
    }
  }
  EXPECT_EQ(checked, 5 * 3125);
}

// --- options x kinds --------------------------------------------------------------------

TEST(Acquisition, WaitZeroIsOneAttemptForEveryKindAndCause) {
  for (const auto& kind : kinds) {
    for (const bool unreachable : {false, true}) {
      const auto t0 = Clock::time_point(1h);
      Acquisition machine(config_for(kind, 0ms), t0, counter_random());
      const auto run = drive(machine, t0, unreachable, 10s);
      EXPECT_EQ(run.attempts.size(), 1u) << kind.name;
      ASSERT_TRUE(run.gave_up) << kind.name;
      EXPECT_EQ(run.gave_up->cause,
                unreachable ? AcquireCause::unreachable : AcquireCause::conflict);
      EXPECT_TRUE(run.every_failure_released);
    }
  }
}

TEST(Acquisition, AFiniteWaitEndsAtItsDeadlineWithNoAttemptAfterIt) {
  for (const auto& kind : kinds) {
    for (const bool unreachable : {false, true}) {
      const auto t0 = Clock::time_point(1h);
      Acquisition machine(config_for(kind, 2s), t0, counter_random());
      const auto run = drive(machine, t0, unreachable, 60s);
      ASSERT_TRUE(run.gave_up) << kind.name;
      EXPECT_EQ(run.gave_up->cause,
                unreachable ? AcquireCause::unreachable : AcquireCause::conflict);
      EXPECT_GE(run.attempts.size(), 2u) << kind.name << ": it waited without trying again";
      for (const auto at : run.attempts) EXPECT_LE(at, t0 + 2s) << kind.name;
      EXPECT_GE(run.ended, t0 + 2s) << kind.name << ": gave up before the wait ended";
      EXPECT_LE(run.ended, t0 + 2s + 10ms) << kind.name;
      EXPECT_EQ(run.gave_up->attempts, static_cast<int>(run.attempts.size()));
      EXPECT_TRUE(run.every_failure_released);
    }
  }
}

TEST(Acquisition, WaitMaxNeverEndsAndItsDeadlineSaturates) {
  for (const auto& kind : kinds) {
    for (const bool unreachable : {false, true}) {
      const auto t0 = Clock::time_point(1h);
      Acquisition machine(config_for(kind, milliseconds::max()), t0, counter_random());
      EXPECT_EQ(machine.deadline(), Clock::time_point::max());
      const auto run = drive(machine, t0, unreachable, 10min);
      EXPECT_FALSE(run.gave_up) << kind.name << ": gave up after " << run.attempts.size();
      EXPECT_GE(run.attempts.size(), 10u) << kind.name;
    }
  }
}

TEST(Acquisition, WaitDeadlineSaturatesAtTheEndOfTheClock) {
  const auto late = Clock::time_point::max() - 1h;
  EXPECT_EQ(wait_deadline(late, 2h), Clock::time_point::max());
  EXPECT_EQ(wait_deadline(late, 30min), late + 30min);
  EXPECT_EQ(wait_deadline(Clock::time_point(1h), milliseconds::max()), Clock::time_point::max());
}

TEST(Acquisition, MaxAttemptsCountsTheFirstForEveryKindAndCause) {
  for (const auto& kind : kinds) {
    for (const bool unreachable : {false, true}) {
      auto config = config_for(kind, milliseconds::max());
      config.retry.max_attempts = 3;
      const auto t0 = Clock::time_point(1h);
      Acquisition machine(config, t0, counter_random());
      const auto run = drive(machine, t0, unreachable, 10min);
      EXPECT_EQ(run.attempts.size(), 3u) << kind.name;
      ASSERT_TRUE(run.gave_up);
      EXPECT_EQ(run.gave_up->attempts, 3);
    }
  }
}

TEST(Acquisition, FailFastEndsAtTheFirstUnreachableQuorumButWaitsOutConflicts) {
  for (const auto& kind : kinds) {
    auto config = config_for(kind, 2s);
    config.fail_fast = true;
    const auto t0 = Clock::time_point(1h);
    Acquisition unreachable(config, t0, counter_random());
    const auto down = drive(unreachable, t0, true, 60s);
    EXPECT_EQ(down.attempts.size(), 1u) << kind.name;
    ASSERT_TRUE(down.gave_up);
    EXPECT_EQ(down.gave_up->cause, AcquireCause::unreachable);

    Acquisition conflict(config, t0, counter_random());
    const auto held = drive(conflict, t0, false, 60s);
    EXPECT_GE(held.ended, t0 + 2s) << kind.name << ": fail_fast gave up on a conflict";
  }
}

// Nodes that fail at once (connection refused) must not turn a waiter into a stream of
// attempts: the retries back off from the retry delay to a second, whatever wakes come.
TEST(Acquisition, AnUnreachableQuorumIsRetriedAtABoundedRateForEveryKind) {
  for (const auto& kind : kinds) {
    const auto t0 = Clock::time_point(1h);
    Acquisition machine(config_for(kind, 60s), t0, counter_random());
    const auto run = drive(machine, t0, true, 60s, /*round_trip=*/0ms);
    // Backed off, attempts come 0.5 to 1 s apart: at most 120 in 60 s, a few more before.
    EXPECT_LE(run.attempts.size(), 125u) << kind.name;
    EXPECT_GE(run.attempts.size(), 55u) << kind.name << ": the back-off waits longer than 1 s";
    for (std::size_t i = 1; i < run.attempts.size(); ++i) {
      EXPECT_GE(run.attempts[i] - run.attempts[i - 1], 50ms) << kind.name << " attempt " << i;
    }
  }
}

TEST(Acquisition, WakesDoNotShortenTheBackOffOfAnUnreachableQuorum) {
  const auto t0 = Clock::time_point(1h);
  Acquisition machine(config_for(kinds[0], 10s), t0, counter_random());
  ASSERT_EQ(machine.start(t0, false, true).step, Step::send_attempt);
  const auto slept = machine.attempt_decided(unreachable_facts(t0), t0 + 1ms, true);
  ASSERT_EQ(slept.step, Step::sleep);
  // Our own leftovers' release announcement, or any other: ignored.
  EXPECT_EQ(machine.woken(t0 + 2ms, true).step, Step::none);
  EXPECT_EQ(machine.timer_fired(slept.until, true).step, Step::send_attempt);
}

TEST(Acquisition, AWakeAfterAConflictTriesAtOnceAndPastTheDeadlineGivesUp) {
  const auto t0 = Clock::time_point(1h);
  Acquisition machine(config_for(kinds[0], 1s), t0, counter_random());
  machine.start(t0, false, true);
  ASSERT_EQ(machine.attempt_decided(conflict_facts(t0), t0 + 1ms, true).step, Step::sleep);
  EXPECT_EQ(machine.woken(t0 + 5ms, true).step, Step::send_attempt);
  ASSERT_EQ(machine.attempt_decided(conflict_facts(t0 + 5ms), t0 + 6ms, true).step, Step::sleep);
  const auto late = machine.woken(t0 + 1s, true);
  EXPECT_EQ(late.step, Step::give_up);
  EXPECT_EQ(late.cause, AcquireCause::conflict);
}

TEST(Acquisition, AWaiterSleepsOnTheHolderUnlessItIsAKeySetOrAWriterRefreshingItsIntent) {
  for (const auto& kind : kinds) {
    const auto t0 = Clock::time_point(1h);
    Acquisition machine(config_for(kind, 60s), t0, counter_random());
    machine.start(t0, false, true);
    auto facts = conflict_facts(t0, 30s);
    facts.others_waiting_before = true;  // no recheck: only the holder's TTL counts
    const auto slept = machine.attempt_decided(facts, t0 + 1ms, true);
    ASSERT_EQ(slept.step, Step::sleep);
    const auto span = slept.until - (t0 + 1ms);
    if (kind.refresh_within) {
      EXPECT_LE(span, *kind.refresh_within) << kind.name;
    } else if (kind.sleeps_on_holder) {
      EXPECT_GE(span, 30s) << kind.name;
    } else {
      EXPECT_LE(span, 150ms) << kind.name;
    }
  }
}

// --- stop and close -----------------------------------------------------------------------

TEST(Acquisition, AStopBeforeTheCallMakesNoAttempt) {
  for (const auto& kind : kinds) {
    for (const milliseconds wait : {0ms, 2000ms, milliseconds::max()}) {
      Acquisition machine(config_for(kind, wait), Clock::time_point(1h), counter_random());
      const auto action = machine.start(Clock::time_point(1h), /*stop_requested=*/true, true);
      EXPECT_EQ(action.step, Step::give_up);
      EXPECT_EQ(action.cause, AcquireCause::stopped);
      EXPECT_EQ(machine.attempts(), 0);
    }
  }
}

TEST(Acquisition, AStopWhileWaitingEndsAtOnce) {
  for (const auto& kind : kinds) {
    const auto t0 = Clock::time_point(1h);
    Acquisition machine(config_for(kind, milliseconds::max()), t0, counter_random());
    machine.start(t0, false, true);
    ASSERT_EQ(machine.attempt_decided(conflict_facts(t0), t0 + 1ms, true).step, Step::sleep);
    const auto stopped = machine.stop();
    EXPECT_EQ(stopped.step, Step::give_up);
    EXPECT_EQ(stopped.cause, AcquireCause::stopped);
    EXPECT_EQ(machine.timer_fired(t0 + 1s, true).step, Step::none);
    EXPECT_EQ(machine.woken(t0 + 1s, true).step, Step::none);
  }
}

TEST(Acquisition, AStopWithAnAttemptOnTheWireReleasesWhatItGot) {
  for (const auto& kind : kinds) {
    for (const bool during_write_back : {false, true}) {
      auto config = config_for(kind, 2s);
      config.write_back = during_write_back;
      const auto t0 = Clock::time_point(1h);
      Acquisition machine(config, t0, counter_random());
      machine.start(t0, false, true);
      if (during_write_back) {
        ASSERT_EQ(machine.attempt_decided(reached_facts(t0), t0 + 1ms, true).step,
                  Step::send_write_back);
      }
      const auto stopped = machine.stop();
      EXPECT_EQ(stopped.step, Step::give_up);
      EXPECT_EQ(stopped.cause, AcquireCause::stopped);
      // The round comes back granted: nothing is handed out, everything is released.
      const auto late = during_write_back
                            ? machine.write_back_decided(Decision::reached, FailureKind::contention,
                                                         t0 + 2ms, true)
                            : machine.attempt_decided(reached_facts(t0), t0 + 2ms, true);
      EXPECT_EQ(late.step, Step::none) << kind.name;
      EXPECT_TRUE(late.release_attempt) << kind.name;
    }
  }
}

TEST(Acquisition, NothingIsHandedOutOnceTheClientCloses) {
  for (const auto& kind : kinds) {
    for (const bool write_back : {false, true}) {
      auto config = config_for(kind, 2s);
      config.write_back = write_back;
      const auto t0 = Clock::time_point(1h);
      Acquisition machine(config, t0, counter_random());
      machine.start(t0, false, true);
      auto action = machine.attempt_decided(reached_facts(t0), t0 + 1ms, write_back);
      if (write_back) {
        ASSERT_EQ(action.step, Step::send_write_back);
        action = machine.write_back_decided(Decision::reached, FailureKind::contention, t0 + 2ms,
                                            /*accepting=*/false);
      }
      EXPECT_EQ(action.step, Step::give_up) << kind.name;
      EXPECT_EQ(action.cause, AcquireCause::closed);
      EXPECT_TRUE(action.release_attempt);
    }
  }
  Acquisition closing(config_for(kinds[0], 2s), Clock::time_point(1h), counter_random());
  EXPECT_EQ(closing.start(Clock::time_point(1h), false, /*accepting=*/false).cause,
            AcquireCause::closed);
}

TEST(Acquisition, CloseWhileWaitingGivesUpAndATimerAfterItDoesNothing) {
  const auto t0 = Clock::time_point(1h);
  Acquisition machine(config_for(kinds[0], 2s), t0, counter_random());
  machine.start(t0, false, true);
  machine.attempt_decided(conflict_facts(t0), t0 + 1ms, true);
  EXPECT_EQ(machine.close().cause, AcquireCause::closed);
  EXPECT_EQ(machine.timer_fired(t0 + 1s, true).step, Step::none);
}

// --- validity and the write-back ----------------------------------------------------------

TEST(Acquisition, ValidityCountsFromTheAttemptsStartThroughTheWriteBack) {
  auto config = config_for(kinds[0], 0ms);
  config.write_back = true;
  const auto t0 = Clock::time_point(1h);
  Acquisition machine(config, t0, counter_random());
  machine.start(t0, false, true);
  ASSERT_EQ(machine.attempt_decided(reached_facts(t0), t0 + 3ms, true).step, Step::send_write_back);
  const auto out =
      machine.write_back_decided(Decision::reached, FailureKind::contention, t0 + 9ms, true);
  ASSERT_EQ(out.step, Step::hand_out);
  EXPECT_EQ(out.valid_until, valid_until(t0, 10s, {}));
}

TEST(Acquisition, AQuorumThatAgreedTooLateIsRetriedOrReportedAsExpired) {
  for (const milliseconds wait : {0ms, 60000ms}) {
    const auto t0 = Clock::time_point(1h);
    Acquisition machine(config_for(kinds[0], wait), t0, counter_random());
    machine.start(t0, false, true);
    const auto action = machine.attempt_decided(reached_facts(t0), t0 + 11s, true);
    EXPECT_TRUE(action.release_attempt);
    if (wait == 0ms) {
      EXPECT_EQ(action.step, Step::give_up);
      EXPECT_EQ(action.cause, AcquireCause::validity_expired);
    } else {
      EXPECT_EQ(action.step, Step::sleep);
    }
  }
}

TEST(Acquisition, AFailedWriteBackIsAnAttemptThatFailed) {
  auto config = config_for(kinds[0], 0ms);
  config.write_back = true;
  for (const auto failure : {FailureKind::contention, FailureKind::unreachable}) {
    const auto t0 = Clock::time_point(1h);
    Acquisition machine(config, t0, counter_random());
    machine.start(t0, false, true);
    machine.attempt_decided(reached_facts(t0), t0 + 1ms, true);
    const auto action = machine.write_back_decided(Decision::impossible, failure, t0 + 2ms, true);
    EXPECT_EQ(action.step, Step::give_up);
    EXPECT_TRUE(action.release_attempt);
    EXPECT_EQ(action.cause, failure == FailureKind::unreachable ? AcquireCause::unreachable
                                                                : AcquireCause::write_back_failed);
  }
}

TEST(Acquisition, WrongKindEndsTheAcquisitionWhateverTheWait) {
  for (const auto& kind : kinds) {
    const auto t0 = Clock::time_point(1h);
    Acquisition machine(config_for(kind, milliseconds::max()), t0, counter_random());
    machine.start(t0, false, true);
    auto facts = conflict_facts(t0);
    facts.wrong_kind = true;
    const auto action = machine.attempt_decided(facts, t0 + 1ms, true);
    EXPECT_EQ(action.step, Step::give_up);
    EXPECT_EQ(action.cause, AcquireCause::wrong_kind);
    EXPECT_TRUE(action.release_attempt);
  }
}

TEST(Acquisition, AWaiterQueuedBehindOthersSleepsFirstAndAWakeStartsIt) {
  const auto t0 = Clock::time_point(1h);
  Acquisition machine(config_for(kinds[0], 2s), t0, counter_random());
  const auto first = machine.start(t0, false, true, /*others_waiting=*/true);
  ASSERT_EQ(first.step, Step::sleep);
  EXPECT_EQ(machine.attempts(), 0);
  EXPECT_EQ(machine.woken(t0 + 1ms, true).step, Step::send_attempt);
  EXPECT_EQ(machine.attempts(), 1);
}

TEST(Acquisition, UnreachableRetriesBackOffFromTheDelayToASecond) {
  const RetryPolicy policy{100ms, 50ms, 0};
  for (std::uint64_t random : {0ULL, 1ULL << 40, ~0ULL}) {
    EXPECT_GE(unreachable_retry(1, policy, random), 50ms);
    EXPECT_LE(unreachable_retry(1, policy, random), 100ms);
    EXPECT_GE(unreachable_retry(30, policy, random), 500ms);
    EXPECT_LE(unreachable_retry(30, policy, random), 1000ms);
  }
  // A retry delay longer than a second is honoured as it is.
  EXPECT_GE(unreachable_retry(9, {5s, 0ms, 0}, 0), 2500ms);
  // A zero delay still never spins.
  EXPECT_GE(unreachable_retry(1, {0ms, 0ms, 0}, 0), 1ms);
}

}  // namespace
}  // namespace redlock::core

// The progress line of chaos/run: the scenario's place in the run, and a time left that
// starts from a guess and then follows what the finished scenarios really took.

#include "runner/run_progress.hpp"

#include <gtest/gtest.h>

namespace redlock::chaos {
namespace {

using std::chrono::milliseconds;

TEST(RunProgress, GuessesFromTheDurationUntilAScenarioFinished) {
  RunProgress progress(3, milliseconds(30'000));
  // Three scenarios of 30 s plus a guessed 5 s each.
  EXPECT_EQ(progress.starting("baseline"), "scenario 1/3 baseline (30 s, about 1 min 45 s left)");
}

TEST(RunProgress, ThenFollowsWhatTheFinishedOnesTook) {
  RunProgress progress(3, milliseconds(30'000));
  progress.starting("baseline");
  progress.finished(milliseconds(40'000));
  EXPECT_EQ(progress.starting("node_paused"),
            "scenario 2/3 node_paused (30 s, about 1 min 20 s left)");
  progress.finished(milliseconds(50'000));
  EXPECT_EQ(progress.starting("clock_jump_two"),
            "scenario 3/3 clock_jump_two (30 s, about 45 s left)");
}

TEST(HumanDuration, RoundsToWhatAPersonReads) {
  EXPECT_EQ(human_duration(milliseconds(400)), "0 s");
  EXPECT_EQ(human_duration(milliseconds(59'600)), "1 min 0 s");
  EXPECT_EQ(human_duration(milliseconds(310'000)), "5 min 10 s");
  EXPECT_EQ(human_duration(milliseconds(3'720'000)), "1 h 2 min");
}

}  // namespace
}  // namespace redlock::chaos

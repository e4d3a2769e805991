#pragma once
// Where a chaos run of several scenarios is and about how long is left, for the line the
// runner prints as each scenario starts. A scenario takes its duration plus the time to
// start a cluster and check the records; until one has finished that overhead is a
// guess, after that it is the average seen so far.

#include <chrono>
#include <cstddef>
#include <string>

namespace redlock::chaos {

class RunProgress {
 public:
  RunProgress(std::size_t scenarios, std::chrono::milliseconds duration);

  /// "scenario 3/13 node_paused (30 s, about 5 min 10 s left)"
  std::string starting(const std::string& name);
  /// Records how long the scenario that last started took.
  void finished(std::chrono::milliseconds took);

 private:
  std::size_t scenarios_;
  std::chrono::milliseconds duration_;
  std::size_t started_ = 0;
  std::size_t finished_ = 0;
  std::chrono::milliseconds took_{0};
};

/// "45 s", "5 min 10 s", "1 h 2 min": rounded to what a person reads at a glance.
std::string human_duration(std::chrono::milliseconds duration);

}  // namespace redlock::chaos

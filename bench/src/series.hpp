#pragma once
// --series: what happened in each short window of a run, for runs where a member changes
// under the client (a Sentinel failover, a cluster resharding): locks acquired and
// attempts failed per window, each member's grants and errors per window, and the
// members' connection events with their time. --fault-command runs a command at a set
// time in the window, so the windows and the fault share one clock.

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include <redlock/observer.hpp>

#include "window.hpp"

namespace redlock_bench {

class SeriesObserver final : public redlock::Observer {
 public:
  SeriesObserver(std::chrono::milliseconds window, std::vector<std::string> nodes);

  /// Windows count from here; events before it are not recorded.
  void start(Clock::time_point at);
  void on_attempt(const redlock::AttemptEvent& event) override;
  void on_lock(const redlock::LockEvent& event) override;
  void on_node(const redlock::NodeEvent& event) override;
  /// {"window_ms", "acquired", "failed", "members": [{"node", "granted", "errors",
  /// "error_texts"}],
  /// "events": [{"t_ms", "node", "kind", "detail"}]}; windows up to `end`.
  nlohmann::json report(Clock::time_point end) const;

 private:
  // The window of `at`, or -1 before start(); grows the per-window vectors to hold it.
  long slot(Clock::time_point at);
  void count_nodes(const std::vector<redlock::NodeOutcome>& nodes, long index);

  std::chrono::milliseconds window_;
  std::vector<std::string> nodes_;
  mutable std::mutex mutex_;
  Clock::time_point start_{};
  bool started_ = false;
  std::vector<std::uint64_t> acquired_;
  std::vector<std::uint64_t> failed_;
  std::vector<std::vector<std::uint64_t>> granted_;  // [member][window]
  std::vector<std::vector<std::uint64_t>> errors_;   // [member][window]
  // [member]: "status: detail" -> count, over the whole window, to say what the errors were.
  std::vector<std::map<std::string, std::uint64_t>> error_texts_;
  nlohmann::json events_ = nlohmann::json::array();
};

/// Runs a shell command at a time inside the window, on a thread of its own, and
/// records when it started and ended (ms since the window opened) and its exit status.
class FaultRunner {
 public:
  FaultRunner(std::string command, std::chrono::milliseconds at);
  ~FaultRunner();
  FaultRunner(const FaultRunner&) = delete;
  FaultRunner& operator=(const FaultRunner&) = delete;

  void start(Clock::time_point window_open);
  /// Waits for the command to end; {"command", "at_ms", "done_ms", "exit_status"}.
  nlohmann::json finish();

 private:
  std::string command_;
  std::chrono::milliseconds at_;
  Clock::time_point open_{};
  std::thread thread_;
  double started_ms_ = -1;
  double done_ms_ = -1;
  int status_ = -1;
};

}  // namespace redlock_bench

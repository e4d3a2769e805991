#pragma once
// One run of the `redlock` binary: started with posix_spawn, stdout and stderr captured
// in files (no pipe can fill up and stall it), waited for with a deadline.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace redlock::test {

struct CliResult {
  int exit_code = -1;  ///< 128 + N when killed by signal N, as a shell reports it.
  std::string out;
  std::string err;
  std::chrono::milliseconds elapsed{0};  ///< From start to the moment it was reaped.
};

class CliProcess {
 public:
  using Clock = std::chrono::steady_clock;

  /// Starts `redlock args...`. The environment is ours without any REDLOCK_* variable,
  /// plus `environment`.
  explicit CliProcess(const std::vector<std::string>& args,
                      const std::vector<std::pair<std::string, std::string>>& environment = {});
  /// A process still running gets SIGTERM (which it forwards to its command), then
  /// SIGKILL after 5 s, and is reaped; the capture files are removed.
  ~CliProcess();
  CliProcess(const CliProcess&) = delete;
  CliProcess& operator=(const CliProcess&) = delete;

  pid_t pid() const { return pid_; }
  Clock::time_point started() const { return started_; }
  /// Reaps without blocking; true once the process has exited.
  bool exited();
  /// Waits at most `timeout`; nullopt if the process is still running then.
  std::optional<CliResult> wait_for(std::chrono::milliseconds timeout);
  /// The result; only once exited().
  CliResult result() const;
  /// Sends `signo` to this process (and nothing else) while it runs.
  void signal(int signo) const;
  std::string err() const;
  /// What it wrote to stdout so far.
  std::string out() const;

 private:
  std::string dir_;
  pid_t pid_ = -1;
  Clock::time_point started_;
  std::optional<int> status_;
  Clock::time_point ended_;
};

/// Runs `redlock args...` to completion (at most `timeout`, else the result has
/// exit_code -1 and the process is terminated).
CliResult run_cli(const std::vector<std::string>& args,
                  const std::vector<std::pair<std::string, std::string>>& environment = {},
                  std::chrono::milliseconds timeout = std::chrono::seconds(30));

/// Waits until every process exited or `timeout` passed; true when all exited.
bool wait_all(const std::vector<CliProcess*>& processes, std::chrono::milliseconds timeout);

}  // namespace redlock::test

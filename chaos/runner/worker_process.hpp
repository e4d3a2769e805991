#pragma once
// One redlock-chaos-worker child process: started with its arguments, paused and resumed
// (a client that stalls mid-critical-section), and waited for.

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace redlock::chaos {

class WorkerProcess {
 public:
  /// Starts `binary` with `args`; its stdout and stderr go to `log_path`. The child dies
  /// with the runner (PR_SET_PDEATHSIG). Throws std::runtime_error.
  WorkerProcess(const std::string& binary, const std::vector<std::string>& args,
                const std::string& log_path);
  /// Kills a child that is still running.
  ~WorkerProcess();
  WorkerProcess(WorkerProcess&& other) noexcept;
  WorkerProcess& operator=(WorkerProcess&&) = delete;
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  pid_t pid() const { return pid_; }
  void pause();
  void resume();
  /// Waits for the child to exit by itself; after `timeout`, SIGTERM, then SIGKILL.
  /// Returns the exit status (128 + signal when killed).
  int wait(std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  bool paused_ = false;
};

}  // namespace redlock::chaos

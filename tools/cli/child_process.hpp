#pragma once
// The command `run` executes under the lock.

#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace redlock::cli {

class ChildProcess {
 public:
  using Environment = std::vector<std::pair<std::string, std::string>>;

  /// Starts argv[0] (searched in PATH) with our environment plus `set` (replacing
  /// variables of the same name) and without the variables named in `unset`. The child
  /// starts with an empty signal mask and default dispositions for the signals this
  /// process changed; dispositions we inherited (nohup's SIGHUP, say) pass through.
  /// Throws std::system_error when the command cannot be executed (errno ENOENT when
  /// it was not found).
  static ChildProcess spawn(const std::vector<std::string>& argv, const Environment& set,
                            const std::vector<std::string>& unset,
                            const std::vector<int>& reset_to_default);

  pid_t pid() const noexcept { return pid_; }

  /// Sends `signo` unless the child was already reaped (its pid may belong to another
  /// process by then).
  void signal(int signo) const;
  /// Reaps the child if it has exited: its wait status once; nullopt while it runs and
  /// after it was reaped.
  std::optional<int> try_reap();

 private:
  explicit ChildProcess(pid_t pid) : pid_(pid) {}
  pid_t pid_;
  bool reaped_ = false;
};

}  // namespace redlock::cli

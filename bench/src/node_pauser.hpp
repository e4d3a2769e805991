#pragma once
// Fault injection: SIGSTOP some nodes (a hung node keeps its sockets open, so the client
// only notices through its own deadlines) and make sure they get SIGCONT again however
// the bench ends — normal exit, an exception, or SIGINT/SIGTERM.

#include <sys/types.h>

#include <vector>

namespace redlock_bench {

class NodePauser {
 public:
  /// Installs SIGINT/SIGTERM handlers that resume the paused nodes and exit with 130.
  NodePauser();
  /// Resumes.
  ~NodePauser();
  NodePauser(const NodePauser&) = delete;
  NodePauser& operator=(const NodePauser&) = delete;

  /// SIGSTOPs each pid; throws std::system_error when one cannot be signalled.
  void pause(const std::vector<pid_t>& pids);
  /// SIGCONTs every paused pid. Idempotent.
  void resume();
};

}  // namespace redlock_bench

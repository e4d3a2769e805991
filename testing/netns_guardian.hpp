#pragma once
// The process that removes a fleet's network namespaces, links and routes however the
// test process ends: a destructor, an exception, SIGINT, or a SIGKILL that no handler sees
// (CTest's timeout). Nothing inside the test process can survive a SIGKILL, so this is a
// shell of its own, in a session of its own (an interrupt of the test's process group
// leaves it to do its work), that holds the read end of a pipe whose write end only the
// test process has. The kernel closes that end when the process is gone, whatever ends
// it; the guardian then kills every process still inside the namespaces and runs what it
// was told to undo, newest first.

#include <sys/types.h>

#include <string>

namespace redlock::testing::detail {

class NetnsGuardian {
 public:
  /// Starts the guardian (/bin/sh), which will run `ip` (a path). Throws
  /// std::runtime_error when it cannot be started.
  explicit NetnsGuardian(const std::string& ip);
  /// finish().
  ~NetnsGuardian();
  NetnsGuardian(const NetnsGuardian&) = delete;
  NetnsGuardian& operator=(const NetnsGuardian&) = delete;

  /// An `ip -batch` line that undoes what the caller is about to make, e.g. "netns del
  /// NAME": told before it is made, so that a crash halfway is undone too. A line
  /// "netns del NAME" also has the processes inside NAME killed first. Lines that find
  /// nothing to undo are ignored. Throws std::runtime_error when the guardian is gone.
  void undo(const std::string& line);
  /// Has the guardian undo everything now (killing what runs in the namespaces) and
  /// returns once it did. Idempotent.
  void finish();

 private:
  pid_t pid_ = -1;
  int pipe_ = -1;  ///< the write end; the guardian starts its work when it closes
};

}  // namespace redlock::testing::detail

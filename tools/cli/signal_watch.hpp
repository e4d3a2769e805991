#pragma once
// Signals as readable events instead of asynchronous handlers: `run` must forward
// SIGINT/SIGTERM/SIGHUP to its command, notice the command's exit (SIGCHLD), and react
// to the lock being lost, all from one poll() on the main thread.

#include <signal.h>
#include <sys/signalfd.h>

#include <initializer_list>
#include <optional>

namespace redlock::cli {

class SignalWatch {
 public:
  /// Blocks `signals` in the calling thread and opens a signalfd for them. Construct it
  /// before any other thread starts (the client's loop thread inherits the mask), so
  /// that no thread takes a signal's default action behind our back.
  explicit SignalWatch(std::initializer_list<int> signals);
  /// Closes the descriptor. The signals stay blocked: unblocking them would deliver one
  /// that arrived meanwhile with its default action, killing the process before it
  /// reports the command's exit code.
  ~SignalWatch();
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  int fd() const noexcept { return fd_; }
  /// The next pending signal, or nullopt when none is pending.
  std::optional<signalfd_siginfo> next();

 private:
  sigset_t watched_;
  int fd_ = -1;
};

}  // namespace redlock::cli

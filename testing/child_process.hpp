#pragma once
// Starting and signalling one child process, the way the fault verbs need: each call
// returns once the kernel reports the new state, so a test's next step sees it.

#include <sys/types.h>

#include <string>
#include <vector>

namespace redlock::testing::detail {

/// In a child between fork and exec: closes every descriptor from 3 up (the test's own
/// sockets must not live on in the program, or closing them in the test would not close
/// them for real), and puts back the default handling of every signal, none blocked.
/// Async-signal-safe, as everything in a child of a process with threads must be.
void reset_inherited_state();

/// Forks and execs `argv` (argv[0] a path) with stdout and stderr appended to `output`,
/// no inherited descriptor beyond them, default signal dispositions, and SIGKILL when the
/// calling thread exits. `environment` ("NAME=value") is added to the process's own
/// environment, replacing a variable of the same name. `network_namespace`, when not
/// empty, is a namespace file (/run/netns/NAME) the program runs in. Returns the pid.
/// Throws std::runtime_error when fork fails or the namespace cannot be opened.
pid_t spawn(const std::vector<std::string>& argv, const std::string& output,
            const std::vector<std::string>& environment = {},
            const std::string& network_namespace = {});

/// What a program that ran to its end said.
struct Finished {
  int status = 0;      ///< its wait status
  std::string output;  ///< its stdout and stderr, interleaved
  bool ok() const;     ///< exited 0
};

/// Runs `argv` (argv[0] a path) to its end, as spawn() starts it (in `network_namespace`
/// when not empty) but with its output captured and `input` on its stdin (else the
/// test's own). Throws std::runtime_error when fork fails or the namespace cannot be
/// opened.
Finished run_to_end(const std::vector<std::string>& argv, const std::string& network_namespace = {},
                    const std::string& input = {});

/// Whether `pid` has exited; reaps it when it has. Never blocks.
bool exited(pid_t pid);
/// SIGSTOP and wait until stopped. False when the process died instead (reaped).
bool stop(pid_t pid);
/// SIGCONT and wait until it runs again. False when it died instead (reaped).
bool resume(pid_t pid);
/// SIGKILL and reap, blocking.
void kill_and_reap(pid_t pid);

}  // namespace redlock::testing::detail

#pragma once
// Starting and signalling one child process, the way the fault verbs need: each call
// returns once the kernel reports the new state, so a test's next step sees it.

#include <sys/types.h>

#include <string>
#include <vector>

namespace redlock::testing::detail {

/// Forks and execs `argv` (argv[0] a path) with stdout and stderr appended to `output`,
/// no inherited descriptor beyond them, default signal dispositions, and SIGKILL when the
/// calling thread exits. `environment` ("NAME=value") is added to the process's own
/// environment, replacing a variable of the same name. Returns the pid. Throws
/// std::runtime_error when fork fails.
pid_t spawn(const std::vector<std::string>& argv, const std::string& output,
            const std::vector<std::string>& environment = {});

/// Whether `pid` has exited; reaps it when it has. Never blocks.
bool exited(pid_t pid);
/// SIGSTOP and wait until stopped. False when the process died instead (reaped).
bool stop(pid_t pid);
/// SIGCONT and wait until it runs again. False when it died instead (reaped).
bool resume(pid_t pid);
/// SIGKILL and reap, blocking.
void kill_and_reap(pid_t pid);

}  // namespace redlock::testing::detail

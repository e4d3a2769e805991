#pragma once
// The exit codes of `redlock`, which scripts branch on, and how library errors map
// onto them.

#include <stdexcept>

#include <redlock/error.hpp>

namespace redlock::cli {

namespace exit_code {
inline constexpr int ok = 0;
/// The lock is held by another owner (run, acquire), or VALUE does not hold it
/// (release, extend). `run --conflict-exit-code` replaces it for contention.
inline constexpr int conflict = 1;
/// Bad flags, a malformed node URL, a bad duration.
inline constexpr int usage = 2;
/// Too many nodes down, slow or erroring: infrastructure, not contention.
inline constexpr int unreachable = 3;
/// run: the lock was lost while the command ran; the command got --lost-signal.
inline constexpr int lost = 4;
/// run: the command exists but could not be executed / was not found (as in a shell).
inline constexpr int cannot_execute = 126;
inline constexpr int not_found = 127;
/// The lock was taken but its value could not be written out (sysexits' EX_IOERR).
inline constexpr int output_error = 74;
}  // namespace exit_code

/// A command line that cannot be acted on. main() prints it with the usage and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The exit code for a failed library call: contention is `conflict_code`, a caller
/// mistake is a usage error, everything else is infrastructure.
int exit_code_for(const Error& error, int conflict_code = exit_code::conflict);

/// 128 + signal for a child killed by a signal, its exit status otherwise (as a shell).
int exit_code_of_wait_status(int wait_status);

}  // namespace redlock::cli

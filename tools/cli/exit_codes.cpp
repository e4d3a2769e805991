#include "exit_codes.hpp"

#include <sys/wait.h>

namespace redlock::cli {

int exit_code_for(const Error& error, int conflict_code) {
  if (error == errc::conflict) return conflict_code;
  // not_held answers "is VALUE the owner?" with no; like contention, that is an
  // outcome about the lock, not about the nodes.
  if (error == errc::not_held) return exit_code::conflict;
  if (error == errc::invalid_argument) return exit_code::usage;
  return exit_code::unreachable;
}

int exit_code_of_wait_status(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 255;  // stopped or continued: never asked for, so never reported
}

}  // namespace redlock::cli

#include "client_stall.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <thread>

namespace redlock_bench {

void stall_this_process(std::chrono::milliseconds length) {
  const pid_t parent = ::getpid();
  const pid_t helper = ::fork();
  if (helper < 0) throw std::system_error(errno, std::generic_category(), "fork");
  if (helper == 0) {
    // The child of a multi-threaded process may only use async-signal-safe calls.
    timespec pause{static_cast<time_t>(length.count() / 1000),
                   static_cast<long>(length.count() % 1000) * 1'000'000L};
    ::kill(parent, SIGSTOP);
    while (::nanosleep(&pause, &pause) != 0 && errno == EINTR) {
    }
    ::kill(parent, SIGCONT);
    ::_exit(0);
  }
  // Reaped at once after the helper exits, so no zombie is left for the run's duration.
  std::thread([helper] { ::waitpid(helper, nullptr, 0); }).detach();
}

}  // namespace redlock_bench

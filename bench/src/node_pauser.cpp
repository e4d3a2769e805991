#include "node_pauser.hpp"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <system_error>

namespace redlock_bench {

namespace {

// A signal handler may only touch lock-free atomics, so the paused pids live in a fixed
// array rather than a vector.
constexpr std::size_t max_paused = 64;
std::array<std::atomic<pid_t>, max_paused> paused_pids{};

void resume_all() noexcept {
  for (auto& slot : paused_pids) {
    const pid_t pid = slot.exchange(0);
    if (pid > 0) ::kill(pid, SIGCONT);
  }
}

extern "C" void on_terminate(int) {
  resume_all();
  ::_exit(130);
}

}  // namespace

NodePauser::NodePauser() {
  struct sigaction action {};
  action.sa_handler = &on_terminate;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

NodePauser::~NodePauser() {
  resume();
}

void NodePauser::pause(const std::vector<pid_t>& pids) {
  for (pid_t pid : pids) {
    std::size_t slot = 0;
    while (slot < max_paused && paused_pids[slot].load() != 0) ++slot;
    if (slot == max_paused) throw std::system_error(E2BIG, std::generic_category(), "pause");
    // Recorded before the signal: a SIGINT in between must still resume it.
    paused_pids[slot] = pid;
    if (::kill(pid, SIGSTOP) != 0) {
      paused_pids[slot] = 0;
      throw std::system_error(errno, std::generic_category(), "SIGSTOP " + std::to_string(pid));
    }
  }
}

void NodePauser::resume() {
  resume_all();
}

}  // namespace redlock_bench

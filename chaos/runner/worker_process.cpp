#include "runner/worker_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace redlock::chaos {
namespace {

using Clock = std::chrono::steady_clock;

// Returns the status once reaped, or -1 while it still runs.
int try_reap(pid_t pid) {
  int status = 0;
  if (::waitpid(pid, &status, WNOHANG) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

WorkerProcess::WorkerProcess(const std::string& binary, const std::vector<std::string>& args,
                             const std::string& log_path) {
  std::vector<std::string> all = {binary};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = ::getpid();
  // Only async-signal-safe calls between fork and exec: the runner has threads.
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    const int fd = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  pid_ = pid;
}

WorkerProcess::WorkerProcess(WorkerProcess&& other) noexcept
    : pid_(other.pid_), paused_(other.paused_) {
  other.pid_ = -1;
}

WorkerProcess::~WorkerProcess() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  ::waitpid(pid_, nullptr, 0);
}

void WorkerProcess::pause() {
  if (pid_ > 0 && ::kill(pid_, SIGSTOP) == 0) paused_ = true;
}

void WorkerProcess::resume() {
  if (pid_ > 0 && ::kill(pid_, SIGCONT) == 0) paused_ = false;
}

int WorkerProcess::wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return -1;
  if (paused_) resume();
  const auto deadline = Clock::now() + timeout;
  int status;
  while ((status = try_reap(pid_)) < 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (status < 0) {
    ::kill(pid_, SIGTERM);
    const auto grace = Clock::now() + std::chrono::seconds(5);
    while ((status = try_reap(pid_)) < 0 && Clock::now() < grace) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  if (status < 0) {
    ::kill(pid_, SIGKILL);
    int raw = 0;
    ::waitpid(pid_, &raw, 0);
    status = 128 + SIGKILL;
  }
  pid_ = -1;
  return status;
}

}  // namespace redlock::chaos

#include "child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>

namespace redlock::testing::detail {

pid_t spawn(const std::vector<std::string>& args, const std::string& output,
            const std::vector<std::string>& environment) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // Made before fork: the child may not allocate.
  std::vector<char*> envp;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto name = text.substr(0, text.find('=') + 1);
    bool replaced = false;
    for (const auto& e : environment) replaced = replaced || e.starts_with(name);
    if (!replaced) envp.push_back(*entry);
  }
  for (const auto& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t parent = ::getpid();

  // Between fork and exec only async-signal-safe calls: the test process has threads
  // (the proxies' loops, the clients under test).
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    const int fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    // The test's own sockets must not leak into redis-server, or closing them in the
    // test would not close them for real.
    ::syscall(SYS_close_range, 3U, ~0U, 0U);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  return pid;
}

namespace {

int wait_for(pid_t pid, int flags) {
  int status = 0;
  while (::waitpid(pid, &status, flags) < 0 && errno == EINTR) {
  }
  return status;
}

}  // namespace

bool exited(pid_t pid) {
  int status = 0;
  return ::waitpid(pid, &status, WNOHANG) == pid && (WIFEXITED(status) || WIFSIGNALED(status));
}

bool stop(pid_t pid) {
  ::kill(pid, SIGSTOP);
  const int status = wait_for(pid, WUNTRACED);
  return WIFSTOPPED(status);
}

bool resume(pid_t pid) {
  ::kill(pid, SIGCONT);
  const int status = wait_for(pid, WCONTINUED);
  return WIFCONTINUED(status);
}

void kill_and_reap(pid_t pid) {
  ::kill(pid, SIGKILL);
  wait_for(pid, 0);
}

}  // namespace redlock::testing::detail

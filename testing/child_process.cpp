#include "child_process.hpp"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string_view>

namespace redlock::testing::detail {

namespace {

std::vector<char*> pointers(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  return argv;
}

// What every child of ours does before exec, after its own redirections: it dies with
// the thread that started it, and inherits nothing else of the test's. Only
// async-signal-safe calls: the test process has threads (the proxies' loops, the clients
// under test).
void prepare_child(pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);
  reset_inherited_state();
}

// The namespace file `path` opened for setns(), or -1 when `path` is empty.
int open_namespace(const std::string& path) {
  if (path.empty()) return -1;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("open " + path + ": " + std::strerror(errno));
  return fd;
}

}  // namespace

void reset_inherited_state() {
  ::syscall(SYS_close_range, 3U, ~0U, 0U);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
}

pid_t spawn(const std::vector<std::string>& args, const std::string& output,
            const std::vector<std::string>& environment, const std::string& network_namespace) {
  std::vector<char*> argv = pointers(args);
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
  const int namespace_fd = open_namespace(network_namespace);

  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    if (namespace_fd >= 0) ::close(namespace_fd);
    throw std::runtime_error(std::string("fork: ") + std::strerror(error));
  }
  if (pid == 0) {
    // Entered before anything else: a program that cannot be where it was asked to be
    // must not run in the test's own namespace instead.
    if (namespace_fd >= 0 && ::setns(namespace_fd, CLONE_NEWNET) != 0) ::_exit(126);
    const int fd = ::open(output.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    prepare_child(parent);
    ::execve(argv[0], argv.data(), envp.data());
    ::_exit(127);
  }
  if (namespace_fd >= 0) ::close(namespace_fd);
  return pid;
}

bool Finished::ok() const {
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

namespace {

// A file in memory holding `text`, read from its start: a program's stdin that cannot
// block the writer, whatever the program does first.
int memory_file(const std::string& text) {
  const int fd = ::memfd_create("redlock-testing-input", MFD_CLOEXEC);
  if (fd < 0) throw std::runtime_error(std::string("memfd_create: ") + std::strerror(errno));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      throw std::runtime_error(std::string("write to a memfd: ") + std::strerror(error));
    }
    done += static_cast<std::size_t>(n);
  }
  ::lseek(fd, 0, SEEK_SET);
  return fd;
}

}  // namespace

Finished run_to_end(const std::vector<std::string>& args, const std::string& network_namespace,
                    const std::string& input) {
  std::vector<char*> argv = pointers(args);
  const int input_fd = input.empty() ? -1 : memory_file(input);
  int namespace_fd = -1;
  try {
    namespace_fd = open_namespace(network_namespace);
  } catch (...) {
    if (input_fd >= 0) ::close(input_fd);
    throw;
  }
  const auto close_ours = [&] {
    if (namespace_fd >= 0) ::close(namespace_fd);
    if (input_fd >= 0) ::close(input_fd);
  };
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    const int error = errno;
    close_ours();
    throw std::runtime_error(std::string("pipe: ") + std::strerror(error));
  }
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    close_ours();
    throw std::runtime_error(std::string("fork: ") + std::strerror(error));
  }
  if (pid == 0) {
    if (namespace_fd >= 0 && ::setns(namespace_fd, CLONE_NEWNET) != 0) ::_exit(126);
    if (input_fd >= 0) ::dup2(input_fd, 0);
    ::dup2(pipe_fds[1], 1);
    ::dup2(pipe_fds[1], 2);
    prepare_child(parent);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  close_ours();
  Finished done;
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n > 0) {
      done.output.append(buffer, static_cast<std::size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  ::close(pipe_fds[0]);
  while (::waitpid(pid, &done.status, 0) < 0 && errno == EINTR) {
  }
  return done;
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

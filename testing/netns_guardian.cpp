#include "netns_guardian.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "child_process.hpp"

namespace redlock::testing::detail {
namespace {

// $1 is the ip command. The lines are kept newest first: links and addresses go before
// the namespaces and the route that claimed their addresses, so that no other fleet sees
// the block free while addresses of it are still up. Processes inside a namespace keep
// it (and its links) alive after `ip netns del`, so they are killed first; every one of
// them is ours, started there by the fleet.
constexpr const char* script = R"sh(
trap '' INT TERM HUP QUIT
undo=
while IFS= read -r line; do
  undo="$line
$undo"
done
printf '%s' "$undo" | while read -r verb object name rest; do
  if [ "$verb $object" = "netns del" ]; then
    for pid in $("$1" netns pids "$name" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
  fi
done
printf '%s' "$undo" | "$1" -force -batch - >/dev/null 2>&1
exit 0
)sh";

}  // namespace

NetnsGuardian::NetnsGuardian(const std::string& ip) {
  // A write to a guardian that died must be an error, not the end of the test.
  ::signal(SIGPIPE, SIG_IGN);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  const std::vector<std::string> args = {"/bin/sh", "-c", script, "redlock-netns-guardian", ip};
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::runtime_error(std::string("fork: ") + std::strerror(error));
  }
  if (pid == 0) {
    // Only async-signal-safe calls until exec. No PR_SET_PDEATHSIG: it must outlive us.
    ::setsid();
    ::dup2(fds[0], 0);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, 1);
      ::dup2(null, 2);
    }
    reset_inherited_state();
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(fds[0]);
  pid_ = pid;
  pipe_ = fds[1];
}

NetnsGuardian::~NetnsGuardian() {
  finish();
}

void NetnsGuardian::undo(const std::string& line) {
  if (pipe_ < 0) throw std::runtime_error("the network namespaces' guardian has finished");
  const std::string text = line + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(pipe_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      throw std::runtime_error(std::string("the network namespaces' guardian is gone: ") +
                               std::strerror(errno));
    }
    done += static_cast<std::size_t>(n);
  }
}

void NetnsGuardian::finish() {
  if (pipe_ >= 0) ::close(pipe_);
  pipe_ = -1;
  if (pid_ > 0) {
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  pid_ = -1;
}

}  // namespace redlock::testing::detail

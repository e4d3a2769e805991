#include "child_process.hpp"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <system_error>

extern char** environ;

namespace redlock::cli {

namespace {

bool named_in(const std::string& entry, const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 &&
        entry[name.size()] == '=') {
      return true;
    }
  }
  return false;
}

/// posix_spawn's attributes, destroyed on every path out.
class SpawnAttributes {
 public:
  explicit SpawnAttributes(const std::vector<int>& reset_to_default) {
    posix_spawnattr_init(&attributes_);
    sigset_t none;
    sigemptyset(&none);
    sigset_t defaults;
    sigemptyset(&defaults);
    for (int signo : reset_to_default) sigaddset(&defaults, signo);
    posix_spawnattr_setsigmask(&attributes_, &none);
    posix_spawnattr_setsigdefault(&attributes_, &defaults);
    posix_spawnattr_setflags(&attributes_, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  }
  ~SpawnAttributes() { posix_spawnattr_destroy(&attributes_); }
  SpawnAttributes(const SpawnAttributes&) = delete;
  SpawnAttributes& operator=(const SpawnAttributes&) = delete;

  const posix_spawnattr_t* get() const { return &attributes_; }

 private:
  posix_spawnattr_t attributes_;
};

}  // namespace

ChildProcess ChildProcess::spawn(const std::vector<std::string>& argv, const Environment& set,
                                 const std::vector<std::string>& unset,
                                 const std::vector<int>& reset_to_default) {
  std::vector<std::string> names = unset;
  for (const auto& [name, value] : set) names.push_back(name);
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    if (!named_in(*entry, names)) environment.emplace_back(*entry);
  }
  for (const auto& [name, value] : set) environment.push_back(name + "=" + value);

  std::vector<char*> c_argv;
  for (const auto& arg : argv) c_argv.push_back(const_cast<char*>(arg.c_str()));
  c_argv.push_back(nullptr);
  std::vector<char*> c_environment;
  for (const auto& entry : environment) c_environment.push_back(const_cast<char*>(entry.c_str()));
  c_environment.push_back(nullptr);

  SpawnAttributes attributes(reset_to_default);
  pid_t pid = -1;
  // glibc's posix_spawn reports a failed exec (not found, not executable) as its
  // return value, so the caller can tell "could not start" from "exited with 127".
  const int error =
      posix_spawnp(&pid, c_argv[0], nullptr, attributes.get(), c_argv.data(), c_environment.data());
  if (error != 0) throw std::system_error(error, std::generic_category(), argv[0]);
  return ChildProcess(pid);
}

void ChildProcess::signal(int signo) const {
  if (!reaped_) ::kill(pid_, signo);
}

std::optional<int> ChildProcess::try_reap() {
  if (reaped_) return std::nullopt;
  int status = 0;
  pid_t done;
  do {
    done = ::waitpid(pid_, &status, WNOHANG);
  } while (done < 0 && errno == EINTR);
  if (done != pid_) return std::nullopt;
  reaped_ = true;
  return status;
}

}  // namespace redlock::cli

#include "cli_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace redlock::test {

namespace {

using namespace std::chrono_literals;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

CliProcess::CliProcess(const std::vector<std::string>& args,
                       const std::vector<std::pair<std::string, std::string>>& environment) {
  std::string pattern = (std::filesystem::temp_directory_path() / "redlock-cli-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = pattern;

  std::vector<std::string> argv = {REDLOCK_CLI};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    // The developer's own REDLOCK_NODES must not point a test at another cluster.
    if (std::string_view(*entry).rfind("REDLOCK_", 0) != 0) env.emplace_back(*entry);
  }
  for (const auto& [name, value] : environment) env.push_back(name + "=" + value);

  std::vector<char*> c_argv;
  for (auto& arg : argv) c_argv.push_back(arg.data());
  c_argv.push_back(nullptr);
  std::vector<char*> c_env;
  for (auto& entry : env) c_env.push_back(entry.data());
  c_env.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  const auto out = dir_ + "/out";
  const auto err = dir_ + "/err";
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  // The test process may block or ignore signals (gtest does not, but a harness might);
  // the CLI must start as it would from a shell.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t none;
  sigemptyset(&none);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (int signo : {SIGINT, SIGTERM, SIGHUP, SIGPIPE, SIGCHLD}) sigaddset(&defaults, signo);
  posix_spawnattr_setsigmask(&attributes, &none);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  started_ = Clock::now();
  const int error =
      posix_spawn(&pid_, c_argv[0], &actions, &attributes, c_argv.data(), c_env.data());
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    std::filesystem::remove_all(dir_);
    throw std::runtime_error(std::string("cannot start ") + REDLOCK_CLI + ": " +
                             std::strerror(error));
  }
}

CliProcess::~CliProcess() {
  if (!exited()) {
    ::kill(pid_, SIGTERM);
    if (!wait_for(5s)) {
      ::kill(pid_, SIGKILL);
      int status = 0;
      ::waitpid(pid_, &status, 0);
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

bool CliProcess::exited() {
  if (status_) return true;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) == pid_) {
    ended_ = Clock::now();
    status_ = status;
  }
  return status_.has_value();
}

std::optional<CliResult> CliProcess::wait_for(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (!exited()) {
    if (Clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(2ms);
  }
  return result();
}

CliResult CliProcess::result() const {
  CliResult result;
  if (status_) {
    result.exit_code = WIFEXITED(*status_) ? WEXITSTATUS(*status_) : 128 + WTERMSIG(*status_);
    result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(ended_ - started_);
  }
  result.out = read_file(dir_ + "/out");
  result.err = read_file(dir_ + "/err");
  return result;
}

void CliProcess::signal(int signo) const {
  if (!status_) ::kill(pid_, signo);
}

std::string CliProcess::err() const {
  return read_file(dir_ + "/err");
}

std::string CliProcess::out() const {
  return read_file(dir_ + "/out");
}

CliResult run_cli(const std::vector<std::string>& args,
                  const std::vector<std::pair<std::string, std::string>>& environment,
                  std::chrono::milliseconds timeout) {
  CliProcess process(args, environment);
  if (auto result = process.wait_for(timeout)) return *result;
  CliResult timed_out = process.result();
  timed_out.exit_code = -1;
  return timed_out;
}

bool wait_all(const std::vector<CliProcess*>& processes, std::chrono::milliseconds timeout) {
  const auto deadline = CliProcess::Clock::now() + timeout;
  for (;;) {
    bool all = true;
    for (auto* process : processes) all = process->exited() && all;
    if (all) return true;
    if (CliProcess::Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(2ms);
  }
}

}  // namespace redlock::test

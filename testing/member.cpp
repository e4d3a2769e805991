#include <chrono>
#include <deque>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <system_error>
#include <thread>

#include <redlock/testing/member.hpp>

#include "child_process.hpp"
#include "loopback.hpp"
#include "member_impl.hpp"

namespace redlock::testing {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// Generous: a loaded CI machine, sanitizer builds, and an append-only file to load.
constexpr auto start_timeout = 15s;
constexpr int port_attempts = 10;

std::string tail_of(const std::string& path, std::size_t lines) {
  std::ifstream in(path);
  std::deque<std::string> kept;
  std::string line;
  while (std::getline(in, line)) {
    kept.push_back(line);
    if (kept.size() > lines) kept.pop_front();
  }
  std::string text;
  for (const auto& l : kept) text += l + "\n";
  return text;
}

}  // namespace

Member::Impl::Impl(std::size_t index_, std::string dir_, std::string binary_,
                   const FleetOptions& options)
    : index(index_),
      dir(std::move(dir_)),
      binary(std::move(binary_)),
      persistence(options.persistence),
      extra_args(options.extra_args) {
  std::filesystem::create_directories(dir);
  std::string why;
  for (int attempt = 0; attempt < port_attempts; ++attempt) {
    port = detail::free_port();
    if (start(why)) break;
    // Another process took the port between free_port() and the server's bind: try
    // another. Any other failure would only repeat.
    if (why.find("another process") == std::string::npos &&
        why.find("Address already in use") == std::string::npos) {
      break;
    }
  }
  if (pid < 0) {
    throw std::runtime_error("redlock::testing: member " + std::to_string(index) +
                             " did not start: " + why);
  }
  if (options.proxies) fault_proxy = std::make_unique<chaos::FaultProxy>("127.0.0.1", port);
}

Member::Impl::~Impl() {
  fault_proxy.reset();
  stop();
}

std::vector<std::string> Member::Impl::command_line() const {
  std::vector<std::string> args = {
      binary,  "--bind",    "127.0.0.1",        "--port", std::to_string(port),
      "--dir", dir,         "--daemonize",      "no",     "--protected-mode",
      "no",    "--logfile", dir + "/redis.log", "--save", ""};
  if (persistence) {
    args.insert(args.end(), {"--appendonly", "yes", "--appendfsync", "always"});
  } else {
    args.insert(args.end(), {"--appendonly", "no"});
  }
  args.insert(args.end(), extra_args.begin(), extra_args.end());
  return args;
}

bool Member::Impl::start(std::string& why) {
  pid = detail::spawn(command_line(), dir + "/redis.stdout");
  paused = false;
  const auto deadline = Clock::now() + start_timeout;
  while (Clock::now() < deadline) {
    if (detail::exited(pid)) {
      pid = -1;
      why = "redis-server exited on port " + std::to_string(port) + "\n" + log_tail(20);
      return false;
    }
    switch (detail::probe(port, pid)) {
      case detail::Probe::ready:
        return true;
      case detail::Probe::foreign:
        stop();
        why = "port " + std::to_string(port) + " is served by another process";
        return false;
      case detail::Probe::silent:
        std::this_thread::sleep_for(5ms);
        break;
    }
  }
  stop();
  why = "redis-server did not answer PING within " +
        std::to_string(std::chrono::duration_cast<std::chrono::seconds>(start_timeout).count()) +
        " s on port " + std::to_string(port) + "\n" + log_tail(20);
  return false;
}

void Member::Impl::restart() {
  stop();
  // The port is fixed now; a process that took it meanwhile, or a connection of the old
  // server in TIME_WAIT, may still let go of it.
  const auto give_up = Clock::now() + 5s;
  std::string why;
  do {
    if (start(why)) return;
    if (why.find("Address already in use") == std::string::npos &&
        why.find("another process") == std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(50ms);
  } while (Clock::now() < give_up);
  throw std::runtime_error("redlock::testing: member " + std::to_string(index) +
                           " did not restart: " + why);
}

void Member::Impl::stop() {
  if (pid > 0) detail::kill_and_reap(pid);
  pid = -1;
  paused = false;
}

bool Member::Impl::alive() {
  if (pid > 0 && detail::exited(pid)) {
    pid = -1;
    paused = false;
  }
  return pid > 0;
}

chaos::FaultProxy& Member::Impl::proxy(const char* verb) {
  if (!fault_proxy) {
    throw std::logic_error(std::string("redlock::testing: Member::") + verb +
                           " needs the fault proxies, and FleetOptions::proxies is off");
  }
  return *fault_proxy;
}

std::string Member::Impl::log_tail(std::size_t lines) const {
  std::string text = tail_of(dir + "/redis.log", lines);
  const std::string output = tail_of(dir + "/redis.stdout", lines);
  if (!output.empty()) text += "(stdout/stderr)\n" + output;
  return text.empty() ? "(no log in " + dir + ")" : "log of " + dir + ":\n" + text;
}

Member::Member(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Member::~Member() = default;

std::size_t Member::index() const {
  return impl_->index;
}
std::string Member::url() const {
  return impl_->fault_proxy ? "redis://127.0.0.1:" + std::to_string(proxy_port()) : direct_url();
}
std::string Member::direct_url() const {
  return "redis://127.0.0.1:" + std::to_string(port());
}
std::uint16_t Member::port() const {
  return impl_->port;
}
std::uint16_t Member::proxy_port() const {
  return impl_->fault_proxy ? impl_->fault_proxy->port() : 0;
}
std::string Member::dir() const {
  return impl_->dir;
}
std::string Member::log_tail(std::size_t lines) const {
  return impl_->log_tail(lines);
}

pid_t Member::pid() const {
  return impl_->pid;
}
bool Member::running() const {
  return impl_->alive();
}
bool Member::paused() const {
  return impl_->alive() && impl_->paused;
}

void Member::pause() {
  if (!impl_->alive() || impl_->paused) return;
  if (detail::stop(impl_->pid)) {
    impl_->paused = true;
  } else {
    impl_->pid = -1;  // it died meanwhile, and stop() reaped it
  }
}

void Member::resume() {
  if (!impl_->alive() || !impl_->paused) return;
  impl_->paused = false;
  if (!detail::resume(impl_->pid)) impl_->pid = -1;
}

void Member::kill() {
  impl_->stop();
}

void Member::restart(RestartOptions options) {
  if (options.persistence && !impl_->persistence) {
    throw std::invalid_argument(
        "redlock::testing: Member::restart({.persistence = true}) needs a fleet made with "
        "FleetOptions::persistence: without an append-only file there is no data to keep");
  }
  impl_->stop();
  if (!options.persistence) {
    // Everything but the logs: the append-only directory, any RDB file.
    std::error_code ignored;
    for (const auto& entry : std::filesystem::directory_iterator(impl_->dir, ignored)) {
      const auto name = entry.path().filename().string();
      if (name != "redis.log" && name != "redis.stdout") {
        std::filesystem::remove_all(entry.path(), ignored);
      }
    }
  }
  impl_->restart();
}

void Member::cut() {
  impl_->proxy("cut").set_mode(chaos::ProxyMode::partition);
}

void Member::heal() {
  auto& proxy = impl_->proxy("heal");
  proxy.set_latency(chaos::Direction::up, std::chrono::milliseconds(0));
  proxy.set_latency(chaos::Direction::down, std::chrono::milliseconds(0));
  proxy.set_mode(chaos::ProxyMode::pass);
}

void Member::slow(std::chrono::milliseconds delay) {
  impl_->proxy("slow").set_latency(chaos::Direction::down, delay);
}

void Member::reset_connections() {
  impl_->proxy("reset_connections").reset_all();
}

}  // namespace redlock::testing

#include <fcntl.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <exception>
#include <stdexcept>

#include <redlock/testing/fleet.hpp>

#include "child_process.hpp"
#include "client_host_impl.hpp"
#include "executable_path.hpp"

namespace redlock::testing {

ClientHost::Inside::Inside(int previous) : previous_(previous) {}

ClientHost::Inside::~Inside() {
  // Back where the thread was; failing that, the thread would go on in the host's
  // namespace, and a test must not go on unaware of it.
  if (::setns(previous_, CLONE_NEWNET) != 0) std::terminate();
  ::close(previous_);
}

ClientHost::ClientHost(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ClientHost::~ClientHost() = default;

std::size_t ClientHost::index() const {
  return impl_->index;
}

std::string ClientHost::name() const {
  return impl_->network->host_namespace(impl_->index).substr(std::strlen("/run/netns/"));
}

std::vector<std::string> ClientHost::urls() const {
  std::vector<std::string> out;
  for (std::size_t member = 0; member < impl_->members; ++member) {
    out.push_back("redis://" + impl_->network->member_address(member, impl_->index + 1) + ":" +
                  std::to_string(detail::NetnsNetwork::member_port));
  }
  return out;
}

void ClientHost::partition(std::size_t member, Partition how) {
  impl_->network->partition(impl_->check(member), {impl_->index + 1}, how);
}

void ClientHost::heal_partition(std::size_t member) {
  impl_->network->heal(impl_->check(member), {impl_->index + 1});
}

bool ClientHost::partitioned(std::size_t member) const {
  return impl_->network->partitioned(impl_->check(member), impl_->index + 1);
}

RunResult ClientHost::run(const std::vector<std::string>& argv) const {
  if (argv.empty()) throw std::invalid_argument("redlock::testing: ClientHost::run of nothing");
  std::vector<std::string> args = argv;
  if (args[0].find('/') == std::string::npos) {
    if (std::string found = detail::find_on_path(args[0]); !found.empty()) args[0] = found;
  }
  const detail::Finished done =
      detail::run_to_end(args, impl_->network->host_namespace(impl_->index));
  RunResult out;
  out.output = done.output;
  out.exit_code = WIFEXITED(done.status) ? WEXITSTATUS(done.status) : 128 + WTERMSIG(done.status);
  return out;
}

ClientHost::Inside ClientHost::enter() const {
  const std::string path = impl_->network->host_namespace(impl_->index);
  const int previous = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (previous < 0) {
    throw std::runtime_error("redlock::testing: ClientHost::enter: /proc/thread-self/ns/net: " +
                             std::string(std::strerror(errno)));
  }
  const int target = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  const int error = target < 0 ? errno : ::setns(target, CLONE_NEWNET) == 0 ? 0 : errno;
  if (target >= 0) ::close(target);
  if (error != 0) {
    ::close(previous);
    throw std::runtime_error("redlock::testing: ClientHost::enter " + path + ": " +
                             std::strerror(error));
  }
  return Inside(previous);
}

}  // namespace redlock::testing

#include <stdexcept>

#include <redlock/testing/fleet.hpp>
#include <redlock/testing/redis_binary.hpp>

#include "client_host_impl.hpp"
#include "member_impl.hpp"
#include "netns_network.hpp"
#include "scratch_dir.hpp"

namespace redlock::testing {

struct Fleet::Impl {
  explicit Impl(FleetOptions fleet_options) : options(std::move(fleet_options)) {}

  FleetOptions options;
  // Declared before the members, so destroyed after them: the servers stop before their
  // directory goes, and before their namespaces do.
  detail::ScratchDir dir;
  std::unique_ptr<detail::NetnsNetwork> network;
  std::vector<std::unique_ptr<ClientHost>> hosts;
  std::vector<std::unique_ptr<Member>> members;
};

namespace {

// A mode's requirements on the specs, checked before anything starts.
void check_network_namespaces(const FleetOptions& options, const std::vector<MemberSpec>& specs) {
  if (!options.network_namespaces) {
    if (options.client_hosts != 0) {
      throw std::logic_error(
          "redlock::testing: FleetOptions::client_hosts needs FleetOptions::network_namespaces");
    }
    return;
  }
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (specs[i].kind == MemberKind::standalone) continue;
    throw std::logic_error(
        "redlock::testing: member " + std::to_string(i) +
        " is a Sentinel group or a cluster, and FleetOptions::network_namespaces puts only "
        "standalone members in namespaces: the servers of a group or a cluster reach one "
        "another and announce their own addresses, so cutting a link of theirs would split "
        "the group rather than cut the member off from its clients");
  }
}

}  // namespace

Fleet::Fleet(FleetOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  // Once, up front: a missing redis-server is then said plainly, not as member 0's
  // failure to start.
  redis_server_binary();
  std::vector<MemberSpec> specs = impl_->options.members;
  if (specs.empty()) specs.resize(impl_->options.masters);
  check_network_namespaces(impl_->options, specs);
  if (impl_->options.network_namespaces) {
    impl_->network =
        std::make_unique<detail::NetnsNetwork>(specs.size(), impl_->options.client_hosts);
    for (std::size_t h = 0; h < impl_->options.client_hosts; ++h) {
      impl_->hosts.push_back(std::make_unique<ClientHost>(std::make_unique<ClientHost::Impl>(
          ClientHost::Impl{h, specs.size(), impl_->network.get()})));
    }
  }
  impl_->members.reserve(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    auto member =
        std::make_unique<Member::Impl>(i, impl_->dir.path() + "/member-" + std::to_string(i),
                                       impl_->options, specs[i], impl_->network.get());
    impl_->members.push_back(std::make_unique<Member>(std::move(member)));
  }
}

Fleet::~Fleet() = default;

Member& Fleet::operator[](std::size_t i) {
  return *impl_->members.at(i);
}
const Member& Fleet::operator[](std::size_t i) const {
  return *impl_->members.at(i);
}
std::size_t Fleet::size() const {
  return impl_->members.size();
}

std::vector<std::string> Fleet::urls() const {
  std::vector<std::string> out;
  out.reserve(impl_->members.size());
  for (const auto& member : impl_->members) out.push_back(member->url());
  return out;
}

ClientHost& Fleet::host(std::size_t i) {
  return *impl_->hosts.at(i);
}

std::string Fleet::namespace_prefix() const {
  return impl_->network ? impl_->network->prefix() : std::string();
}

void Fleet::heal_all() {
  for (auto& host : impl_->hosts) {
    for (std::size_t i = 0; i < impl_->members.size(); ++i) {
      if (host->partitioned(i)) host->heal_partition(i);
    }
  }
  for (auto& member : impl_->members) {
    if (member->partitioned()) member->heal_partition();
    if (member->paused()) member->resume();
    if (!member->running()) member->restart({.persistence = impl_->options.persistence});
    if (member->proxy_port() != 0) member->heal();
    if (impl_->options.fake_clock && member->kind() == MemberKind::standalone) {
      member->set_clock(std::chrono::milliseconds(0));
    }
  }
}

const std::string& Fleet::dir() const {
  return impl_->dir.path();
}
const FleetOptions& Fleet::options() const {
  return impl_->options;
}

}  // namespace redlock::testing

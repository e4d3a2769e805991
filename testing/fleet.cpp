#include <redlock/testing/fleet.hpp>
#include <redlock/testing/redis_binary.hpp>

#include "member_impl.hpp"
#include "scratch_dir.hpp"

namespace redlock::testing {

struct Fleet::Impl {
  explicit Impl(FleetOptions fleet_options) : options(std::move(fleet_options)) {}

  FleetOptions options;
  // Declared before the members, so destroyed after them: the servers stop before their
  // directory goes.
  detail::ScratchDir dir;
  std::vector<std::unique_ptr<Member>> members;
};

Fleet::Fleet(FleetOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {
  // Once, up front: a missing redis-server is then said plainly, not as member 0's
  // failure to start.
  redis_server_binary();
  std::vector<MemberSpec> specs = impl_->options.members;
  if (specs.empty()) specs.resize(impl_->options.masters);
  impl_->members.reserve(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    auto member = std::make_unique<Member::Impl>(
        i, impl_->dir.path() + "/member-" + std::to_string(i), impl_->options, specs[i]);
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

void Fleet::heal_all() {
  for (auto& member : impl_->members) {
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

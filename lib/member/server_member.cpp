#include "member/server_member.hpp"

#include <utility>

namespace redlock::detail {

void ServerMember::watch_start(core::MemberLife::Rules rules, net::Connection* connection,
                               std::chrono::milliseconds timeout) {
  life_.emplace(std::move(rules));
  watch_.emplace(*life_, timeout);
  if (connection != nullptr) watch_->ask(*connection);
}

void ServerMember::ready(net::Connection& connection) {
  if (watch_) watch_->ready(connection);
}

const core::MemberGuard& ServerMember::guard() const noexcept {
  static const core::MemberGuard never_guarded;
  return watch_ ? watch_->guard() : never_guarded;
}

}  // namespace redlock::detail

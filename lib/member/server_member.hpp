#pragma once
// A member that is one Redis server at a time: a standalone master, and the base of a
// Sentinel group's kind (whose server changes at a failover). Its life is its server's
// (core/member_life.hpp), learned from one INFO per connection (member_watch.hpp).

#include <chrono>
#include <optional>

#include "core/member_life.hpp"
#include "member/member_kind.hpp"
#include "member/member_watch.hpp"

namespace redlock::detail {

class ServerMember : public MemberKind {
 public:
  void watch_start(core::MemberLife::Rules rules, net::Connection* connection,
                   std::chrono::milliseconds timeout) override;
  void ready(net::Connection& connection) override;
  const core::MemberGuard& guard() const noexcept override;

 private:
  std::optional<core::MemberLife> life_;  // before watch_, which points to it
  std::optional<MemberWatch> watch_;
};

}  // namespace redlock::detail

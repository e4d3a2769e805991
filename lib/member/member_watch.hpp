#pragma once
// What feeds a server's life (core/member_life.hpp) from its connection: one INFO when
// the node is made and one per connection after, never two at once, each answer, refusal
// or silence reported to the life with the time it came at.

#include <chrono>

#include "core/member_life.hpp"
#include "net/connection.hpp"

namespace redlock::detail {

/// Owned by the node (or the shard watch), before its connection, whose callbacks point
/// here; `life` outlives it.
class MemberWatch {
 public:
  MemberWatch(core::MemberLife& life, std::chrono::milliseconds timeout)
      : life_(life), timeout_(timeout) {}
  /// Asks the server who it is, unless an INFO is on the wire already. Sent when the node
  /// is made, before any lock command, so that the first answer precedes their replies.
  void ask(net::Connection& connection);
  /// A connection became ready (its INFO may be queued behind lock commands).
  void ready(net::Connection& connection);
  const core::MemberGuard& guard() const noexcept { return life_.guard(); }

 private:
  core::MemberLife& life_;
  std::chrono::milliseconds timeout_;
  bool asking_ = false;
};

}  // namespace redlock::detail

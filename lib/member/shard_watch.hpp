#pragma once
// What feeds a Redis Cluster member's shard masters' lives (core/sharded_member_life.hpp)
// from the router: its ShardEvents (net/connection.hpp) become the lives' events, and
// every master connection gets a MemberWatch that asks its server who it is.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "core/member_guard.hpp"
#include "core/sharded_member_life.hpp"
#include "member/member_watch.hpp"
#include "net/connection.hpp"

namespace redlock::detail {

class ShardWatch {
 public:
  explicit ShardWatch(std::chrono::milliseconds timeout) : timeout_(timeout) {}

  /// The router's ConnectionOptions::on_shard. Shards told before start() are kept and
  /// watched from start() on.
  void on_shard(net::Connection& shard, const std::string& address, net::ShardEvent event);
  /// Starts watching with `rules` (their `who` is set per shard): asks every shard known.
  void start(const core::MemberLife::Rules& rules);

  /// core::ShardedMemberLife::guard.
  const core::MemberGuard& guard() const noexcept { return lives_.guard(); }
  /// The guard of a grant `server` (one of the shards' connections) gave; the member's
  /// guard() for a server not known here. Valid while this watch lives; its value is
  /// brought up to date by the next call for that server.
  const core::MemberGuard* guard_for(const net::Connection* server) const;

 private:
  struct Shard {
    net::Connection* connection;
    core::ShardedMemberLife::Shard id;
    std::unique_ptr<MemberWatch> watch;  // stable: its INFO callback points to it
  };
  void watch(Shard& shard);

  std::chrono::milliseconds timeout_;
  // Before shards_: their watches point into it.
  core::ShardedMemberLife lives_;
  std::vector<Shard> shards_;
};

}  // namespace redlock::detail

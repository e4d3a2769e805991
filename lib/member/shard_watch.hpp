#pragma once
// The start of every shard master of a Redis Cluster member, watched as a standalone
// member's is (member/member_start.hpp): one MemberWatch per master connection the
// router makes, fed by its ShardEvents (net/connection.hpp). A cluster member's grants
// come from several servers, any of which may restart empty or be replaced by a replica
// the writes had not reached; the member is guarded while any of them is, since a slot,
// and the keys it lost, may move to another master. Which server answered a grant is
// known (net::ReplyView::server): its own guard applies in full, so a master that has not
// said who it is never has its grants counted; the others' only as far as they are
// guarded, and while one has not said who it is only until it is found silent (its INFO
// timed out or its connection failed), so that one paused master holds back the keys of
// its own slots, not the whole member (core::guard_of_grant).

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/member_guard.hpp"
#include "member/member_start.hpp"
#include "net/connection.hpp"

namespace redlock::detail {

class ShardWatch {
 public:
  explicit ShardWatch(std::chrono::milliseconds timeout) : timeout_(timeout) {}

  /// The router's ConnectionOptions::on_shard. Shards told before start() are kept and
  /// watched from start() on.
  void on_shard(net::Connection& shard, const std::string& address, net::ShardEvent event);
  /// Starts watching with `rules` (their `who` is set per shard): asks every shard known.
  void start(const MemberStart::Rules& rules);

  /// The member's guard where the server that answered is not known: unknown while the
  /// server of any shard that owns slots has not said who it is, else the latest `until`
  /// of those shards, with that shard's reason.
  const core::MemberGuard& guard() const noexcept;
  /// The guard of a grant `server` (one of the shards' connections) gave; the member's
  /// guard() for a server not known here. Valid while this watch lives; its value is
  /// brought up to date by the next call for that server.
  const core::MemberGuard* guard_for(const net::Connection* server) const;

 private:
  struct Shard {
    net::Connection* connection;
    std::string address;
    bool appeared;
    // Owns slots (ShardEvent::left, regained): a server that owns none holds no key of the
    // member, and may be down for good, unable ever to say who it is.
    bool owns;
    std::unique_ptr<MemberWatch> watch;  // stable: its INFO callback points to it
    // guard_for()'s answer for this shard, kept where a reply can point to it.
    std::unique_ptr<core::MemberGuard> of_grant = std::make_unique<core::MemberGuard>();
  };
  void watch(Shard& shard);
  // The shards as core::guard_of_grant takes them (an unwatched shard has no guard).
  std::span<const core::ServerGuard> server_guards() const;

  std::chrono::milliseconds timeout_;
  std::optional<MemberStart::Rules> rules_;
  std::vector<Shard> shards_;
  mutable core::MemberGuard combined_;
  mutable std::vector<core::ServerGuard> server_guards_;
};

}  // namespace redlock::detail

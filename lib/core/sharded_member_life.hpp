#pragma once
// The lives of every shard master of a Redis Cluster member, each watched as a standalone
// member's server is (core/member_life.hpp), and what they make of the member's grants. A
// cluster member's grants come from several servers, any of which may restart empty or be
// replaced by a replica the writes had not reached; the member is guarded while any of
// them is, since a slot, and the keys it lost, may move to another master. Which server
// answered a grant is known (net::ReplyView::server): its own guard applies in full, so a
// master that has not said who it is never has its grants counted; the others' only as
// far as they are guarded, and while one has not said who it is only until it is found
// silent (its INFO timed out or its connection failed), so that one paused master holds
// back the keys of its own slots, not the whole member (core::guard_of_grant).
// Fed with the router's shard events, under an id of its own per shard; the adapter
// (member/shard_watch.hpp) keeps which connection each id stands for.

#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/member_guard.hpp"
#include "core/member_life.hpp"

namespace redlock::core {

class ShardedMemberLife {
 public:
  /// A shard master, in the order this member met them.
  using Shard = std::size_t;

  /// A master the member had when this client first saw it.
  Shard met(std::string address);
  /// A master that joined the member since (a promoted replica, one given slots later):
  /// guarded from `now` once it answers, whatever its age (MemberLife::appeared).
  Shard appeared(std::string address, Clock::time_point now);
  /// A connection to `shard` became ready.
  void ready(Shard shard, Clock::time_point now);
  /// `shard` owns no slot any more: it holds no key of the member, and may be down for
  /// good, unable ever to say who it is.
  void left(Shard shard);
  /// `shard` owns slots again, on a connection that may reach a restarted server.
  void regained(Shard shard, Clock::time_point now);

  /// Starts every shard's life under `rules` (their `who` is set per shard), those met
  /// before too; until then no shard has one and none guards the member.
  void start(const MemberLife::Rules& rules, Clock::time_point now);
  /// Where `shard`'s INFO answers go; null before start().
  MemberLife* life(Shard shard) noexcept;

  /// The member's guard where the server that answered is not known: unknown while the
  /// server of any shard that owns slots has not said who it is, else the latest `until`
  /// of those shards, with that shard's reason.
  const MemberGuard& guard() const noexcept;
  /// The guard of a grant `shard` gave. Valid while this object lives; its value is
  /// brought up to date by the next call for that shard.
  const MemberGuard& guard_for(Shard shard) const;

 private:
  struct Master {
    std::string address;
    bool appeared;
    // Owns slots (left, regained).
    bool owns = true;
    std::unique_ptr<MemberLife> life;  // stable: the registry and the INFO's adapter point to it
    // guard_for()'s answer for this shard, kept where a reply can point to it.
    std::unique_ptr<MemberGuard> of_grant = std::make_unique<MemberGuard>();
  };
  Shard add(std::string address, bool appeared, Clock::time_point now);
  void start_life(Master& master, Clock::time_point now);
  // The shards as core::guard_of_grant takes them (one without a life has no guard).
  std::span<const ServerGuard> server_guards() const;

  std::optional<MemberLife::Rules> rules_;
  std::vector<Master> masters_;
  mutable MemberGuard combined_;
  mutable std::vector<ServerGuard> server_guards_;
};

}  // namespace redlock::core

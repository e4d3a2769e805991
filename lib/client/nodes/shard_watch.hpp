#pragma once
// The start of every shard master of a Redis Cluster member, watched as a standalone
// member's is (client/nodes/member_start.hpp): one MemberWatch per master connection the
// router makes, fed by its ShardEvents (net/connection.hpp). A cluster member's grants
// come from several servers, any of which may restart empty or be replaced by a replica
// the writes had not reached; the member is guarded while any of them is. A guard per key
// (only the grants of the guarded shard not counted) would refuse fewer locks, but needs
// to know which server answered each reply; the member's guard needs nothing per reply,
// and costs only that member's grants for one bound, which the other members cover.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "client/nodes/member_start.hpp"
#include "core/member_guard.hpp"
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

  /// The member's guard: unknown while the server of any shard that owns slots has not
  /// said who it is, else the latest `until` of those shards, with that shard's reason.
  const core::MemberGuard& guard() const noexcept;

 private:
  struct Shard {
    net::Connection* connection;
    std::string address;
    bool appeared;
    // Owns slots (ShardEvent::left, regained): a server that owns none holds no key of the
    // member, and may be down for good, unable ever to say who it is.
    bool owns;
    std::unique_ptr<MemberWatch> watch;  // stable: its INFO callback points to it
  };
  void watch(Shard& shard);

  std::chrono::milliseconds timeout_;
  std::optional<MemberStart::Rules> rules_;
  std::vector<Shard> shards_;
  mutable core::MemberGuard combined_;
};

}  // namespace redlock::detail

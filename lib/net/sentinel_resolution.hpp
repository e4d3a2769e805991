#pragma once
// How a connection to a Sentinel group finds its master, as data: which sentinel to ask
// next, what to dial once one named the master, and the words of every failure. The
// connection (net/connection.cpp) dials and reads; this decides. A look-up round asks the
// sentinels in turn until one names the master, each at most once; a round in which none
// did fails the connection, whose jittered, bounded backoff paces the next round. Each
// round starts with the sentinel after the one that answered last, so that a sentinel
// that keeps naming a stale master (a replica, or a master that is down) is not the only
// one ever asked.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "net/endpoint.hpp"
#include "net/errors.hpp"

struct redisReply;

namespace redlock::net {

class SentinelResolution {
 public:
  /// `group` must be a Sentinel group (Endpoint::is_sentinel_group()).
  explicit SentinelResolution(Endpoint group);

  /// Starts a look-up round: the next target is a sentinel. A round that has had no
  /// answer or failure yet (the one the constructor starts) is kept as it is.
  void begin();
  /// True while the target is a sentinel; false once one named the master.
  bool asking_sentinel() const noexcept { return asking_; }
  /// What to dial now: a sentinel (the group's scheme, the sentinels' credentials, db 0)
  /// or the named master (the group's scheme, credentials and db).
  const Endpoint& target() const noexcept { return target_; }
  /// Names the target in error details: "sentinel 127.0.0.1:26379 (master 'mymaster')" or
  /// "master 'mymaster' at 127.0.0.1:7001 (named by sentinel 127.0.0.1:26379)".
  const std::string& where() const noexcept { return where_; }

  /// The sentinel asked failed (`error` names it). True when another sentinel is left to
  /// ask in this round (the target moved to it); false when the round is over, with
  /// exhausted() the round's error.
  bool sentinel_failed(const NetError& error);
  /// The sentinel asked named the master: the target becomes it.
  void master_named(std::string host, std::uint16_t port);
  /// errc::connection_error: "no sentinel of master 'mymaster' named a reachable master:
  /// <each sentinel's failure>; ...".
  NetError exhausted() const;

  /// The sentinel the current master was named by ("" before any).
  const std::string& naming_sentinel() const noexcept { return naming_sentinel_; }
  /// That sentinel as a target (where +switch-master is watched); valid once one named a
  /// master.
  const Endpoint& naming_endpoint() const noexcept { return naming_endpoint_; }

  /// Whether a +switch-master announcement ("<name> <old ip> <old port> <new ip> <new
  /// port>") moves this group's master away from the one last named: false for other
  /// groups, for the master already dialled, and for a payload of another shape.
  bool switch_moves_master(std::string_view payload) const;
  /// The sentinel that named the master announced `payload` (switch_moves_master() was
  /// true): the next round dials the master it names first, confirmed with ROLE like a
  /// master a sentinel named, instead of asking the sentinels, some of which may still
  /// name the old master (still a master until the sentinels demote it). A round that
  /// fails there asks the sentinels as usual.
  void follow_switch(std::string_view payload);

 private:
  void aim_at_sentinel();
  void aim_at_master(std::string host, std::uint16_t port, const std::string& named_by);

  Endpoint group_;
  Endpoint target_;
  std::string where_;
  bool asking_ = false;
  bool unused_ = false;      // no sentinel of this round has answered or failed yet
  std::size_t next_ = 0;     // the sentinel to ask next, cycling
  std::size_t asked_ = 0;    // sentinels asked in this round
  std::size_t current_ = 0;  // the sentinel being asked
  std::string naming_sentinel_;
  Endpoint naming_endpoint_;
  std::vector<std::string> failures_;
  std::optional<std::pair<std::string, std::uint16_t>> announced_;  // by +switch-master
};

/// "host:port", bracketing IPv6 literals.
std::string describe_address(std::string_view host, std::uint16_t port);

/// Reads the reply to SENTINEL GET-MASTER-ADDR-BY-NAME: true with host and port for
/// [host, port]; false with `problem` for a nil (the sentinel does not monitor that name),
/// an error reply, or any other shape.
bool read_master_address(const redisReply* reply, std::string& host, std::uint16_t& port,
                         std::string& problem);

/// Reads the reply to ROLE: true when it says "master"; otherwise false, with `role` the
/// role it names ("slave", "sentinel") or a description of the unexpected reply.
bool read_role_is_master(const redisReply* reply, std::string& role);

/// Reads the reply to SENTINEL MASTER <name> (a flat array of names and values) for the
/// master `host`:`port` that the same sentinel named: how long it has known that server
/// as the group's master. That is its role-reported-time, which the end of a failover
/// and the sentinel's own restart reset, so it never exceeds the truth as far as this
/// sentinel knows; and zero when the record still describes another server (a failover
/// under way: the sentinel already names the replica it is promoting). nullopt for an
/// error reply (an ACL without +sentinel|master) or another shape.
std::optional<std::chrono::milliseconds> read_role_reported_time(const redisReply* reply,
                                                                 std::string_view host,
                                                                 std::uint16_t port);

/// True for an error reply that says this server cannot take writes as a master right now
/// (READONLY: it is a replica; MASTERDOWN: a replica that lost its master): the sentinels
/// must be asked again.
bool is_not_master_error(std::string_view text) noexcept;

}  // namespace redlock::net

#pragma once
// The life of one Redis server behind a member, as this client sees it, and what it
// makes of the member's grants (core/member_guard.hpp). A server whose run_id or
// replication id differs from the one this client last met is a restarted (or
// failed-over) one; it may have lost keys still live for their holders, so its grants do
// not count until the fleet's longest TTL has passed since this client saw it come back.
// Fed with events and the time they happened at; it never asks the server itself: the
// node sends one INFO per connection, right after the handshake, nothing per lock cycle,
// and reports here (member/member_watch.hpp).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/member_guard.hpp"
#include "core/server_identity.hpp"

namespace redlock::core {

class MemberLife;

/// The servers the members of one client reached, by run_id, so that two members naming
/// one server (two URLs of one host: localhost and 127.0.0.1) do not give it two votes:
/// the member whose INFO revealed a run_id that another member had already answered with
/// does not count while both have it. The later one, not a fixed one, so that its grants,
/// whose replies follow its INFO on its connection, are never counted before it is found
/// out. Loop thread only; each MemberLife enters it when made and leaves it when gone.
class ServerRegistry {
 public:
  void enter(MemberLife& life) { lives_.push_back(&life); }
  void leave(MemberLife& life);
  /// Re-judges every member after one's identity changed.
  void judge();
  /// The order in which run_ids were learned.
  std::uint64_t next_sequence() noexcept { return ++sequence_; }

 private:
  std::vector<MemberLife*> lives_;
  std::uint64_t sequence_ = 0;
};

class MemberLife {
 public:
  struct Rules {
    /// Guard a member whose restart or failover this client observes.
    bool observed = true;
    /// Also guard a member younger than `bound` when this client first meets it.
    bool first_contact = false;
    /// The fleet's longest TTL in milliseconds: how long a member that lost its keys
    /// stays guarded. Shared with the client, which raises it to every longer ttl it is
    /// asked for when Options::member_guard.longest_ttl is left at 0.
    std::shared_ptr<const std::atomic<long long>> bound;
    /// Told when a guard starts or grows: for how long from now, and why. The client
    /// reports it (NodeEventKind::guarded, a warning in the log) so an operator sees a
    /// member that does not count, not only a lock that fails.
    std::function<void(std::chrono::milliseconds, std::string_view)> on_guarded;
    /// Told once per problem of the member's setup that weakens the guard: its server
    /// refuses INFO (or answers one without a run_id), so a restart cannot be told from a
    /// reconnect. The client reports it (NodeEventKind::misconfigured, a warning).
    std::function<void(std::string_view)> on_misconfigured;
    /// Put before every reason: which server of the member it concerns ("shard
    /// 127.0.0.1:7001: "), where a member has several (a cluster's masters).
    std::string who;
    /// Shared by the members of one client: a member answering with the run_id of a
    /// server another member reached first does not count. Null: not checked.
    std::shared_ptr<ServerRegistry> registry;
    /// Which member of the client this is (its index in Options::nodes; the shards of a
    /// cluster member share it), and its URL without a password, for the registry.
    int member = 0;
    std::string url;
    bool any() const noexcept { return observed || first_contact; }
  };

  explicit MemberLife(Rules rules);
  ~MemberLife();
  MemberLife(const MemberLife&) = delete;
  MemberLife& operator=(const MemberLife&) = delete;

  /// A connection to the server became ready at `now`: until its INFO is answered, a
  /// server this client met before may be another one, so its grants do not count.
  void connected(Clock::time_point now);
  /// Like connected(), for a server that joined the member after this client met it (a
  /// cluster master promoted or given slots later): whatever its age, it may lack writes
  /// the member granted, so its answer starts a guard from `now`.
  void appeared(Clock::time_point now);
  /// The connection's INFO answered.
  void learned(const ServerIdentity& identity, Clock::time_point now);
  /// The connection's INFO was refused (an ACL, a renamed command) or could not be read:
  /// the server cannot tell its start, so a reconnect is taken for a restart at the
  /// reconnect, and so is the first INFO answered after a refused one. Told once
  /// (Rules::on_misconfigured).
  void refused(Clock::time_point now);
  /// The connection's INFO ended without an answer: it timed out, or the connection
  /// failed. Says nothing of the server's start; the server answers nothing now, until
  /// the next answer or connection (silent()).
  void fell_silent() noexcept { silent_ = true; }

  /// The guard as of now: one that started before the bound grew (this client was asked
  /// for a longer ttl, so others may hold locks that long) lasts the new bound from its
  /// start, not the old one.
  const MemberGuard& guard() const noexcept;
  /// Its last INFO ended without an answer and no connection became ready since
  /// (core::ServerGuard::silent).
  bool silent() const noexcept { return silent_; }
  const Rules& rules() const noexcept { return rules_; }

 private:
  friend class ServerRegistry;
  /// ServerRegistry::judge: `other` (null: none) reached this server first.
  void same_server_as(const MemberLife* other);

  void guard_from(Clock::time_point start, std::string reason, Clock::time_point now);
  /// Where a guard taken at the connection starts: at the connection, or at `now` when
  /// no connection was reported (an INFO sent before its connection was ready).
  Clock::time_point connection_start(Clock::time_point now) const noexcept;
  std::chrono::milliseconds bound() const noexcept;

  Rules rules_;
  // Mutable: guard() stretches it to the bound's latest value.
  mutable MemberGuard guard_;
  // Where the guard that set guard_.until started; none before any guard.
  std::optional<Clock::time_point> guard_start_;
  /// Whether this client met the server (any connection of it answered INFO or refused
  /// it): from then on a reconnect may reach a restarted one.
  bool met_ = false;
  /// Who the server said it was on its last connection; nullopt when that INFO was
  /// refused, so that a change across the reconnect after it cannot be ruled out.
  std::optional<ServerIdentity> last_;
  bool appeared_ = false;
  bool refusal_told_ = false;
  bool silent_ = false;
  /// When this server's run_id was learned (ServerRegistry::next_sequence); 0: not known.
  std::uint64_t learned_at_ = 0;
  std::string same_server_told_;
  std::optional<Clock::time_point> connected_at_;
};

}  // namespace redlock::core

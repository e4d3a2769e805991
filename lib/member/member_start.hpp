#pragma once
// When a member (one Redis server behind a node URL) last started, as far as it can have
// lost keys, learned from the server itself: one INFO per connection, right after the
// handshake, nothing per lock cycle. A server whose run_id or replication id differs from
// the one this client last met is a restarted (or failed-over) one; it may have lost keys
// still live for their holders, so its grants do not count until the fleet's longest TTL
// has passed since this client saw it come back (core/member_guard.hpp). Pure
// bookkeeping: the node (member/node.cpp) sends the INFO and reports here.

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
#include "net/connection.hpp"

namespace redlock::detail {

/// What INFO says of a server's identity.
struct ServerIdentity {
  std::string run_id;
  std::chrono::seconds uptime{0};
  std::string master_replid;
  std::string master_replid2;
  /// Not from INFO: for a Sentinel group, how long the server has been the group's master
  /// as the sentinel that named it says (net::Connection::master_role_age). A replica
  /// promoted a second ago may have been up for days.
  std::optional<std::chrono::milliseconds> master_for;
};

/// Reads run_id, uptime_in_seconds, master_replid and master_replid2 out of an INFO reply;
/// nullopt when run_id or uptime_in_seconds is missing.
std::optional<ServerIdentity> parse_server_identity(std::string_view info);

class MemberStart;

/// The servers the members of one client reached, by run_id, so that two members naming
/// one server (two URLs of one host: localhost and 127.0.0.1) do not give it two votes:
/// the member whose INFO revealed a run_id that another member had already answered with
/// does not count while both have it. The later one, not a fixed one, so that its grants,
/// whose replies follow its INFO on its connection, are never counted before it is found
/// out. Loop thread only; each MemberStart enters it when made and leaves it when gone.
class ServerRegistry {
 public:
  void enter(MemberStart& start) { starts_.push_back(&start); }
  void leave(MemberStart& start);
  /// Re-judges every member after one's identity changed.
  void judge();
  /// The order in which run_ids were learned.
  std::uint64_t next_sequence() noexcept { return ++sequence_; }

 private:
  std::vector<MemberStart*> starts_;
  std::uint64_t sequence_ = 0;
};

class MemberStart {
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

  explicit MemberStart(Rules rules);
  ~MemberStart();
  MemberStart(const MemberStart&) = delete;
  MemberStart& operator=(const MemberStart&) = delete;

  /// A connection to the member became ready at `now`: until its INFO is answered, a
  /// server this client met before may be another one, so its grants do not count.
  void connected(core::Clock::time_point now);
  /// Like connected(), for a server that joined the member after this client met it (a
  /// cluster master promoted or given slots later): whatever its age, it may lack writes
  /// the member granted, so its answer starts a guard from `now`.
  void appeared(core::Clock::time_point now);
  /// The connection's INFO answered.
  void learned(const ServerIdentity& identity, core::Clock::time_point now);
  /// The connection's INFO was refused (an ACL, a renamed command) or could not be read:
  /// the server cannot tell its start, so a reconnect is taken for a restart at the
  /// reconnect, and so is the first INFO answered after a refused one. Told once
  /// (Rules::on_misconfigured).
  void unanswered(core::Clock::time_point now);

  /// The guard as of now: one that started before the bound grew (this client was asked
  /// for a longer ttl, so others may hold locks that long) lasts the new bound from its
  /// start, not the old one.
  const core::MemberGuard& guard() const noexcept;
  const Rules& rules() const noexcept { return rules_; }

 private:
  friend class ServerRegistry;
  /// ServerRegistry::judge: `other` (null: none) reached this server first.
  void same_server_as(const MemberStart* other);

  void guard_from(core::Clock::time_point start, std::string reason, core::Clock::time_point now);
  std::chrono::milliseconds bound() const noexcept;

  Rules rules_;
  // Mutable: guard() stretches it to the bound's latest value.
  mutable core::MemberGuard guard_;
  // Where the guard that set guard_.until started; none before any guard.
  std::optional<core::Clock::time_point> guard_start_;
  /// Whether this client met the server (any connection of it answered INFO or refused
  /// it): from then on a reconnect may reach a restarted one.
  bool met_ = false;
  /// Who the server said it was on its last connection; nullopt when that INFO was
  /// refused, so that a change across the reconnect after it cannot be ruled out.
  std::optional<ServerIdentity> last_;
  bool appeared_ = false;
  bool refusal_told_ = false;
  /// When this server's run_id was learned (ServerRegistry::next_sequence); 0: not known.
  std::uint64_t learned_at_ = 0;
  std::string same_server_told_;
  core::Clock::time_point connected_at_{};
};

/// A MemberStart fed by its node's connection: one INFO when the node is made and one
/// per connection after, never two at once. Owned by the node, before its connection
/// (whose callbacks point here).
class MemberWatch {
 public:
  MemberWatch(MemberStart::Rules rules, std::chrono::milliseconds timeout)
      : start_(std::move(rules)), timeout_(timeout) {}
  /// Asks the server who it is, unless an INFO is on the wire already. Sent when the node
  /// is made, before any lock command, so that the first answer precedes their replies.
  void ask(net::Connection& connection);
  /// A connection became ready (its INFO may be queued behind lock commands).
  void ready(net::Connection& connection);
  /// MemberStart::appeared, then asks.
  void appeared(net::Connection& connection);
  const core::MemberGuard& guard() const noexcept { return start_.guard(); }
  /// Its last INFO ended without an answer (timed out, or the connection failed) and no
  /// connection became ready since (core::ServerGuard::silent).
  bool silent() const noexcept { return silent_; }

 private:
  MemberStart start_;
  std::chrono::milliseconds timeout_;
  bool asking_ = false;
  bool silent_ = false;
};

/// "not counted: guarded for another 812 ms (run_id changed across a reconnect: ...)"
std::string guarded_detail(const core::MemberGuard& guard, core::Clock::time_point now);

}  // namespace redlock::detail

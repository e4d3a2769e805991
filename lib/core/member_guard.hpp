#pragma once
// Whether a member's grant counts toward a quorum. A member that may have lost keys that
// are still live for their holders (it restarted, or failed over to a replica the writes
// had not reached, less than the fleet's longest TTL ago) could grant a key another
// holder still holds on it. Its grant then must not make up a quorum until that TTL has
// passed: Redlock's delayed restart, enforced by the client instead of by operators. Its
// refusal still counts: a member that says the key is held is telling the truth, since a
// member never invents a holder. The grant is released like any other.

#include <cstddef>
#include <limits>
#include <span>
#include <string>

#include "core/quorum.hpp"
#include "core/validity.hpp"

namespace redlock::core {

/// What a client knows of a member's start at one moment.
struct MemberGuard {
  /// False while a new connection's server has not told who it is yet: its grants do not
  /// count until it has (it may be a restarted server).
  bool known = true;
  /// Grants count from this time on (time_point::min(): never guarded).
  Clock::time_point until = Clock::time_point::min();
  /// Why, for error details and status ("run_id changed across a reconnect").
  std::string reason;
  /// Non-empty: the server is the one another member of the client already reached (the
  /// same run_id, under another URL), named here; its grants do not count, so one server
  /// never votes twice.
  std::string same_server_as;
};

/// One server of a member that has several (a Redis Cluster's shard masters), as that
/// member's guard sees it.
struct ServerGuard {
  const MemberGuard* guard = nullptr;
  /// Owns slots: a server that owns none holds no key of the member (and may be gone for
  /// good, unable ever to say who it is).
  bool owns = true;
  /// Its last INFO ended without an answer (timed out, or its connection failed) and no
  /// connection to it became ready since: it answers nothing now.
  bool silent = false;
};

/// No server of the member is known to have answered.
inline constexpr std::size_t unknown_server = std::numeric_limits<std::size_t>::max();

/// Writes to `out` the guard of a grant of a member made of `servers` that server
/// `answered_by` gave. Its own guard applies in full. Every other server that owns slots
/// guards the member's grants for as long as it is guarded itself (it restarted or failed
/// over, and its slots may move to the server that answered) and while it is the same
/// server as another member's; while it has not said who it is, only until it is found
/// silent: a silent server answers nothing, so it can neither grant nor hand its slots on,
/// and one paused master must not stop the member's other servers counting. With
/// `answered_by` = unknown_server every server that owns slots applies in full.
void guard_of_grant(std::span<const ServerGuard> servers, std::size_t answered_by,
                    MemberGuard& out);

/// Why a guarded member's grant did not count, for error details and status: "not
/// counted: guarded for another 812 ms (run_id changed across a reconnect: ...)".
std::string guarded_detail(const MemberGuard& guard, Clock::time_point now);

/// The stricter of two guards for a grant made of parts from several servers (a key set
/// over several slots): unknown before the same server as another member before the
/// later `until`. Null stands for the member's own guard, stricter than either.
const MemberGuard* stricter_guard(const MemberGuard* a, const MemberGuard* b) noexcept;

/// How many replicas acknowledged a member's write (WAIT), against how many the client
/// requires (Options::member_guard.replicas_to_ack; 0: none required).
struct ReplicaAcks {
  int required = 0;
  int acked = 0;
};

/// Whether a grant with these acknowledgements may count: none required, or at least
/// `required` replicas acknowledged it.
bool acked_enough(ReplicaAcks acks) noexcept;

/// True while the member's grants do not count: unknown, the same server as another
/// member, or before `until`. The guard ends exactly at `until`.
bool guarded(const MemberGuard& guard, Clock::time_point now) noexcept;

/// The vote that counts: a grant of a guarded member becomes Vote::uncounted; every other
/// vote (a refusal, a failure) is unchanged.
Vote counted_vote(Vote vote, const MemberGuard& guard, Clock::time_point now) noexcept;

/// As above, and a grant that fewer replicas than required acknowledged becomes
/// Vote::uncounted too: a failover to a replica it did not reach would lose it.
Vote counted_vote(Vote vote, const MemberGuard& guard, ReplicaAcks acks,
                  Clock::time_point now) noexcept;

}  // namespace redlock::core

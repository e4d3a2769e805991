#pragma once
// Whether a member's grant counts toward a quorum. A member that may have lost keys that
// are still live for their holders (it restarted, or failed over to a replica the writes
// had not reached, less than the fleet's longest TTL ago) could grant a key another
// holder still holds on it. Its grant then must not make up a quorum until that TTL has
// passed: Redlock's delayed restart, enforced by the client instead of by operators. Its
// refusal still counts: a member that says the key is held is telling the truth, since a
// member never invents a holder. The grant is released like any other.

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

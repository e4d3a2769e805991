#include "core/member_guard.hpp"

namespace redlock::core {

bool guarded(const MemberGuard& guard, Clock::time_point now) noexcept {
  return !guard.known || !guard.same_server_as.empty() || now < guard.until;
}

Vote counted_vote(Vote vote, const MemberGuard& guard, Clock::time_point now) noexcept {
  if (vote == Vote::granted && guarded(guard, now)) return Vote::uncounted;
  return vote;
}

bool acked_enough(ReplicaAcks acks) noexcept {
  return acks.required <= 0 || acks.acked >= acks.required;
}

Vote counted_vote(Vote vote, const MemberGuard& guard, ReplicaAcks acks,
                  Clock::time_point now) noexcept {
  if (vote == Vote::granted && !acked_enough(acks)) return Vote::uncounted;
  return counted_vote(vote, guard, now);
}

}  // namespace redlock::core

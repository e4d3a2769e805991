#include "core/member_guard.hpp"

namespace redlock::core {

bool guarded(const MemberGuard& guard, Clock::time_point now) noexcept {
  return !guard.known || now < guard.until;
}

Vote counted_vote(Vote vote, const MemberGuard& guard, Clock::time_point now) noexcept {
  if (vote == Vote::granted && guarded(guard, now)) return Vote::uncounted;
  return vote;
}

}  // namespace redlock::core

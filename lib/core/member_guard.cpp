#include "core/member_guard.hpp"

#include <chrono>

namespace redlock::core {

bool guarded(const MemberGuard& guard, Clock::time_point now) noexcept {
  return !guard.known || !guard.same_server_as.empty() || now < guard.until;
}

Vote counted_vote(Vote vote, const MemberGuard& guard, Clock::time_point now) noexcept {
  if (vote == Vote::granted && guarded(guard, now)) return Vote::uncounted;
  return vote;
}

namespace {

// Unknown before the same server as another member before the later `until`.
int rank(bool known, const MemberGuard& guard) noexcept {
  if (!known) return 2;
  if (!guard.same_server_as.empty()) return 1;
  return 0;
}

bool stricter_than(const MemberGuard& a, const MemberGuard& b) noexcept {
  const int rank_a = rank(a.known, a);
  const int rank_b = rank(b.known, b);
  if (rank_a != rank_b) return rank_a > rank_b;
  return a.until > b.until;
}

}  // namespace

void guard_of_grant(std::span<const ServerGuard> servers, std::size_t answered_by,
                    MemberGuard& out) {
  const MemberGuard* chosen = nullptr;
  bool chosen_known = true;
  for (std::size_t i = 0; i < servers.size(); ++i) {
    const ServerGuard& server = servers[i];
    if (server.guard == nullptr) continue;
    const bool answered = i == answered_by;
    if (!answered && !server.owns) continue;
    const MemberGuard& guard = *server.guard;
    // A silent server's restart or failover, once seen, still guards the member; its
    // having not said who it is yet does not.
    const bool known = guard.known || (!answered && answered_by != unknown_server && server.silent);
    if (chosen == nullptr) {
      chosen = &guard;
      chosen_known = known;
      continue;
    }
    const int rank_new = rank(known, guard);
    const int rank_old = rank(chosen_known, *chosen);
    if (rank_new > rank_old || (rank_new == rank_old && guard.until > chosen->until)) {
      chosen = &guard;
      chosen_known = known;
    }
  }
  if (chosen == nullptr) {
    out = MemberGuard{};
    return;
  }
  if (&out != chosen) out = *chosen;
  out.known = chosen_known;
}

std::string guarded_detail(const MemberGuard& guard, Clock::time_point now) {
  if (!guard.known) return "not counted: the server has not said yet who it is";
  if (!guard.same_server_as.empty()) {
    return "not counted: the same server as " + guard.same_server_as +
           ", which counts for it (two URLs naming one server)";
  }
  const auto left = std::chrono::ceil<std::chrono::milliseconds>(guard.until - now);
  return "not counted: guarded for another " + std::to_string(left.count()) + " ms (" +
         guard.reason + ")";
}

const MemberGuard* stricter_guard(const MemberGuard* a, const MemberGuard* b) noexcept {
  if (a == nullptr || b == nullptr) return nullptr;
  return stricter_than(*b, *a) ? b : a;
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

#include "core/quorum.hpp"

#include <algorithm>
#include <cassert>

namespace redlock::core {

namespace {
constexpr signed char pending_vote = -1;
}

QuorumRound::QuorumRound(int nodes, int quorum)
    : quorum_(quorum), votes_(static_cast<std::size_t>(nodes), pending_vote) {
  assert(nodes >= 1 && quorum >= 1 && quorum <= nodes);
}

void QuorumRound::reset(int nodes, int quorum) {
  assert(nodes >= 1 && quorum >= 1 && quorum <= nodes);
  quorum_ = quorum;
  votes_.assign(static_cast<std::size_t>(nodes), pending_vote);
  grants_ = refusals_ = failures_ = uncounted_ = 0;
  max_token_ = 0;
  decision_ = Decision::undecided;
  abandoned_ = false;
  abandoned_undecided_ = false;
  grants_at_decision_ = 0;
  max_token_at_decision_ = 0;
}

bool QuorumRound::answered(int index) const noexcept {
  return votes_[static_cast<std::size_t>(index)] != pending_vote;
}

Decision QuorumRound::record(int index, Vote vote, std::uint64_t token) {
  auto& slot = votes_[static_cast<std::size_t>(index)];
  if (slot != pending_vote) return decision_;
  slot = static_cast<signed char>(vote);
  switch (vote) {
    case Vote::granted:
      ++grants_;
      max_token_ = std::max(max_token_, token);
      break;
    case Vote::refused:
      ++refusals_;
      break;
    case Vote::failed:
      ++failures_;
      break;
    case Vote::uncounted:
      ++uncounted_;
      break;
  }
  if (decision_ == Decision::undecided) {
    if (grants_ >= quorum_) {
      decision_ = Decision::reached;
    } else if (grants_ + pending() < quorum_) {
      decision_ = Decision::impossible;
    }
    if (decision_ != Decision::undecided) {
      grants_at_decision_ = grants_;
      max_token_at_decision_ = max_token_;
    }
  }
  return decision_;
}

Decision QuorumRound::abandon_pending() {
  abandoned_ = true;
  if (decision_ == Decision::undecided) {
    abandoned_undecided_ = true;
    decision_ = Decision::impossible;
    grants_at_decision_ = grants_;
    max_token_at_decision_ = max_token_;
  }
  return decision_;
}

std::chrono::microseconds straggler_allowance(std::chrono::microseconds slowest_answer,
                                              std::chrono::milliseconds node_timeout) {
  constexpr std::chrono::microseconds shortest{2000};
  const std::chrono::microseconds longest =
      std::max<std::chrono::microseconds>(node_timeout, shortest);
  return std::clamp(4 * slowest_answer, shortest, longest);
}

FailureKind QuorumRound::failure_kind() const noexcept {
  const int failing = failures_ + uncounted_;
  const int spare = nodes() - quorum_;
  // Given up on while a quorum was still possible: the refusals made the difference (the
  // failures and uncounted grants cannot exceed N - quorum then).
  if (abandoned_undecided_) {
    return failing > spare ? FailureKind::unreachable : FailureKind::contention;
  }
  // A settled round that was not abandoned has no silent node that could matter
  // (settled() waits for them), and one that timed out counts them as failing.
  if (!abandoned_ || pending() == 0) {
    return failing + pending() > spare ? FailureKind::unreachable : FailureKind::contention;
  }
  // Given up on after the answers had ruled a quorum out: the silent nodes are taken to
  // fail as the answered nodes that did not grant did, in proportion (an impossible round
  // has at least one such answer): failing + pending * failing / against > spare.
  const int against = failing + refusals_;
  return failing * (against + pending()) > spare * against ? FailureKind::unreachable
                                                           : FailureKind::contention;
}

bool QuorumRound::settled() const noexcept {
  switch (decision_) {
    case Decision::reached:
      return true;
    case Decision::impossible:
      return pending() == 0 || failures_ + uncounted_ + pending() <= nodes() - quorum_;
    case Decision::undecided:
      break;
  }
  return false;
}

}  // namespace redlock::core

#include "core/retry.hpp"

#include <algorithm>

namespace redlock::core {

namespace {

/// 1 ms up to `base` ms doubled per `streak` past the first (at most 32 times `base`, from
/// streak 6) plus one, uniformly: never at once, and never the same instant for two
/// contenders by design.
Backoff doubling_from(std::chrono::milliseconds base, std::chrono::milliseconds after) {
  return {base, 32 * base, Jitter::full, after + std::chrono::milliseconds(1), {}};
}

// A round trip as a retry delay: never 0 (a busy loop), never past a node timeout.
std::chrono::milliseconds one_round_trip(std::chrono::milliseconds round_trip,
                                         std::chrono::milliseconds node_timeout) {
  constexpr std::chrono::milliseconds shortest{1};
  return std::clamp(round_trip, shortest, std::max(node_timeout, shortest));
}

}  // namespace

RetrySchedule::RetrySchedule(RetryPolicy policy, Clock::time_point deadline, RandomSource random)
    : policy_(policy), deadline_(deadline), random_(std::move(random)) {}

std::chrono::milliseconds RetrySchedule::jittered_delay() {
  const auto jitter = std::max(policy_.jitter, std::chrono::milliseconds(0));
  // No draw without jitter: a scripted source then scripts only the draws that matter.
  const std::uint64_t random = jitter.count() > 0 ? random_() : 0;
  return Backoff::around(policy_.delay, jitter).delay(1, random);
}

std::optional<Clock::time_point> RetrySchedule::next_attempt(
    int attempts_made, Clock::time_point now,
    std::optional<std::chrono::milliseconds> holder_expires_in) {
  if (policy_.max_attempts > 0 && attempts_made >= policy_.max_attempts) return std::nullopt;
  if (now >= deadline_) return std::nullopt;
  auto wait = jittered_delay();
  if (holder_expires_in && *holder_expires_in > wait) {
    // Woken early by a release notification if one comes; otherwise the earliest moment
    // the holder's key can be gone. A little jitter keeps waiters from colliding.
    wait = *holder_expires_in + std::chrono::milliseconds(jittered_delay().count() / 10);
  }
  return std::min(now + wait, deadline_);
}

std::chrono::milliseconds backoff_retry(int streak, std::chrono::milliseconds node_timeout,
                                        std::uint64_t random) {
  return doubling_from(2 * node_timeout, {}).delay(streak, random);
}

std::chrono::milliseconds leaving_holder_retry(int streak, std::chrono::milliseconds node_timeout,
                                               std::chrono::milliseconds round_trip,
                                               std::uint64_t random) {
  if (streak <= 1) {
    // A millisecond of jitter after the round trip.
    constexpr std::chrono::milliseconds one{1};
    return Backoff{one, one, Jitter::full, one_round_trip(round_trip, node_timeout), {}}.delay(
        streak, random);
  }
  return backoff_retry(streak - 1, node_timeout, random);
}

std::chrono::milliseconds split_vote_retry(int streak, std::chrono::milliseconds node_timeout,
                                           std::chrono::milliseconds round_trip, bool first,
                                           std::uint64_t random) {
  const auto first_slot = one_round_trip(round_trip, node_timeout);
  if (first && streak <= 1) return first_slot;
  const auto quarter = std::max(node_timeout / 4, std::chrono::milliseconds(2));
  return doubling_from(quarter, first_slot).delay(streak, random);
}

std::optional<std::chrono::milliseconds> split_clears_in(
    int quorum, int free_now, std::vector<std::chrono::milliseconds> refusing_ttls) {
  constexpr std::chrono::milliseconds gone_for_sure{1};
  const int to_expire = quorum - free_now;
  if (to_expire <= 0) return gone_for_sure;
  std::erase_if(refusing_ttls, [](std::chrono::milliseconds ttl) { return ttl.count() < 0; });
  if (static_cast<int>(refusing_ttls.size()) < to_expire) return std::nullopt;
  const auto last_needed = refusing_ttls.begin() + (to_expire - 1);
  std::nth_element(refusing_ttls.begin(), last_needed, refusing_ttls.end());
  return *last_needed + gone_for_sure;
}

}  // namespace redlock::core

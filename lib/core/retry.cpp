#include "core/retry.hpp"

#include <algorithm>
#include <memory>
#include <mutex>
#include <random>

#include "core/lock_value.hpp"

namespace redlock::core {

namespace {

/// 1 ms up to `base` ms doubled per `streak` past the first (capped at six doublings) plus
/// one, uniformly: never at once, and never the same instant for two contenders by design.
std::chrono::milliseconds doubling_retry(int streak, std::int64_t base, std::uint64_t random) {
  const int doublings = std::clamp(streak, 1, 6) - 1;
  const auto span = static_cast<std::uint64_t>(base * (std::int64_t{1} << doublings) + 1);
  return std::chrono::milliseconds(1 + static_cast<std::int64_t>(random % span));
}

// A round trip as a retry delay: never 0 (a busy loop), never past a node timeout.
std::chrono::milliseconds one_round_trip(std::chrono::milliseconds round_trip,
                                         std::chrono::milliseconds node_timeout) {
  constexpr std::chrono::milliseconds shortest{1};
  return std::clamp(round_trip, shortest, std::max(node_timeout, shortest));
}

}  // namespace

RandomSource system_random() {
  // One generator per source, seeded from the CSPRNG; the mutex makes a source shared
  // between threads safe. Jitter needs no cryptographic strength, only independence
  // between processes.
  struct State {
    std::mutex mutex;
    std::mt19937_64 engine;
  };
  auto state = std::make_shared<State>();
  std::uint64_t seed = 0;
  fill_random(&seed, sizeof seed);
  state->engine.seed(seed);
  return [state] {
    std::lock_guard lock(state->mutex);
    return state->engine();
  };
}

RetrySchedule::RetrySchedule(RetryPolicy policy, Clock::time_point deadline, RandomSource random)
    : policy_(policy), deadline_(deadline), random_(std::move(random)) {}

std::chrono::milliseconds RetrySchedule::jittered_delay() {
  const auto jitter = std::max<std::int64_t>(policy_.jitter.count(), 0);
  std::int64_t offset = 0;
  if (jitter > 0) {
    const auto span = static_cast<std::uint64_t>(2 * jitter + 1);
    offset = static_cast<std::int64_t>(random_() % span) - jitter;
  }
  return std::chrono::milliseconds(std::max<std::int64_t>(policy_.delay.count() + offset, 0));
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
  return doubling_retry(streak, 2 * node_timeout.count(), random);
}

std::chrono::milliseconds leaving_holder_retry(int streak, std::chrono::milliseconds node_timeout,
                                               std::chrono::milliseconds round_trip,
                                               std::uint64_t random) {
  if (streak <= 1) {
    return one_round_trip(round_trip, node_timeout) + std::chrono::milliseconds(random % 2);
  }
  return backoff_retry(streak - 1, node_timeout, random);
}

std::chrono::milliseconds split_vote_retry(int streak, std::chrono::milliseconds node_timeout,
                                           std::chrono::milliseconds round_trip, bool first,
                                           std::uint64_t random) {
  const auto first_slot = one_round_trip(round_trip, node_timeout);
  if (first && streak <= 1) return first_slot;
  return first_slot +
         doubling_retry(streak, std::max<std::int64_t>(node_timeout.count() / 4, 2), random);
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

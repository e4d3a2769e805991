#pragma once
// When to try again after a failed acquire attempt (step 5). A fixed delay plus uniform
// jitter spreads contenders apart so they do not collide in lockstep; the wait deadline
// and an optional attempt limit bound the whole operation. The random source is
// injected so tests are deterministic.

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/backoff.hpp"
#include "core/random_source.hpp"
#include "core/validity.hpp"

namespace redlock::core {

struct RetryPolicy {
  std::chrono::milliseconds delay{100};
  std::chrono::milliseconds jitter{50};
  /// Attempts in total, the first included. 0 = no limit but the wait deadline.
  int max_attempts = 0;
};

class RetrySchedule {
 public:
  /// `deadline`: no attempt starts after it (start + wait).
  RetrySchedule(RetryPolicy policy, Clock::time_point deadline, RandomSource random);

  /// Called after attempt number `attempts_made` (1-based) failed at `now`. Returns when
  /// the next attempt should start, or nullopt when the operation should give up.
  /// `holder_expires_in`: when known, the shortest remaining TTL a holder reported; a
  /// caller that is woken by release notifications passes it so it sleeps until the
  /// lock can expire instead of polling every `delay` (the wait is still capped by the
  /// deadline).
  std::optional<Clock::time_point> next_attempt(
      int attempts_made, Clock::time_point now,
      std::optional<std::chrono::milliseconds> holder_expires_in = std::nullopt);

  /// delay + uniform[-jitter, +jitter], never negative (Backoff::around).
  std::chrono::milliseconds jittered_delay();

  Clock::time_point deadline() const noexcept { return deadline_; }

 private:
  RetryPolicy policy_;
  Clock::time_point deadline_;
  RandomSource random_;
};

/// A jittered span of two node timeouts, doubled per consecutive failure (`streak` 1, 2,
/// ... up to 32 times the first span, from streak 6): the next attempt after a refusal
/// that should clear within a round trip but may not (a release that announced on one node
/// but failed on the others), so that a waiter does not poll at full rate until the
/// entries expire. `random`: a uniform 64-bit number.
std::chrono::milliseconds backoff_retry(int streak, std::chrono::milliseconds node_timeout,
                                        std::uint64_t random);

/// The next attempt after a refusal by a holder whose release was already announced: the
/// first node to apply a release announces it, and a waiter woken by that may reach the
/// other nodes before the release does. Their announcements carry the same value and wake
/// no one again. The release is in flight and lands within about a round trip, so the
/// first such refusal (`streak` 1) looks again after `round_trip` (at least 1 ms, at most
/// a node timeout) and a millisecond of jitter: a longer wait leaves the key free for a
/// polling client of another library. Consecutive refusals (streak 2, 3, ...) back off
/// (backoff_retry, from its streak 1), since that release may have failed on the others.
std::chrono::milliseconds leaving_holder_retry(int streak, std::chrono::milliseconds node_timeout,
                                               std::chrono::milliseconds round_trip,
                                               std::uint64_t random);

/// The head waiter's next attempt after a split vote between contenders. Waiters of
/// several clients woken by one release announcement split the nodes between them, and
/// each deletes what it got at once; were each to draw a random delay, the key would sit
/// free for it, a window in which a polling client of another library takes it. The
/// contenders read each other's values on the nodes that refused them, so they agree on an
/// order without a message: the one whose value orders first (`first`) tries again after
/// `round_trip` (the others' deletes land meanwhile; at least 1 ms, at most a node
/// timeout), the others after that and a jittered span of a quarter node timeout (at least
/// 2 ms), doubled per consecutive split vote (`streak` 1, 2, ... up to 32 times the first
/// span, from streak 6). Only a streak's first split has an order: a split that lasts
/// (other clients' entries that wait to expire) is polled with back-off by every
/// contender. `random`: a uniform 64-bit number.
std::chrono::milliseconds split_vote_retry(int streak, std::chrono::milliseconds node_timeout,
                                           std::chrono::milliseconds round_trip, bool first,
                                           std::uint64_t random);

/// The next attempt after a split vote (no value on a quorum): the attempt's own grants are
/// deleted at once, so `free_now` nodes are free, and each refusing node frees up when its
/// entry expires (`refusing_ttls`: the remaining TTLs they reported; negative = no TTL or
/// none read, never counted). Returns how long until at least `quorum` nodes are free,
/// plus a millisecond so the entries are surely gone (at least 1 ms: never a busy loop), or
/// nullopt when the known entries cannot free a quorum (nodes that failed count as
/// held). Other Redlock clients (npm `redlock`) keep a failed attempt's entries until they
/// expire; a waiter that tries again the moment they do, instead of after its retry delay,
/// is the first on the freed nodes.
std::optional<std::chrono::milliseconds> split_clears_in(
    int quorum, int free_now, std::vector<std::chrono::milliseconds> refusing_ttls);

}  // namespace redlock::core

#pragma once
// Extending one held lock, the one way both Lock::extend() and the watchdog do it, so that
// the lock has one TTL and one validity that only ever reflect what a quorum holds:
// - rounds of one lock run one at a time, in the order asked (a manual extend and a
//   watchdog tick never race on the nodes);
// - nothing is sent once the lock was unlocked or lost, or its validity ended: an expired
//   lock is never extended, not even while its value still sits on the nodes;
// - before a round is sent the validity is capped at what that round leaves, since nodes
//   may apply it even when the round fails (a shorter TTL shortens the key at once);
// - a confirmed round sets the validity from its own start and makes its TTL the lock's.

#include <chrono>
#include <memory>
#include <optional>

#include "client/operations/operations.hpp"

namespace redlock::detail {

struct LockState;

/// Loop thread only. `ttl` nullopt: the lock's TTL when the round starts (the watchdog's
/// way, so that a manual extend queued before it sets the TTL it keeps). `done` runs
/// exactly once, on the loop thread: with the new valid_until, or the error (not_held,
/// lock_lost, quorum_unreachable, validity_expired, cancelled). It may run from inside
/// this call when the lock cannot be extended.
void extend_lock(const std::shared_ptr<LockState>& lock,
                 std::optional<std::chrono::milliseconds> ttl, ExtendDone done);

}  // namespace redlock::detail

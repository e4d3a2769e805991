#pragma once
// Auto-extension for long work: every `interval` the lock is extended to its ttl. A
// failed round is retried while enough validity is left to try again safely; when it
// is not (or a quorum says the lock is no longer ours), the lock is marked lost and
// `on_lost` runs — while some validity remains, so the owner can stop before another
// holder can exist.

#include <chrono>
#include <functional>
#include <memory>

#include <redlock/error.hpp>

namespace redlock::detail {

struct LockState;

/// Loop thread only. The watchdog holds the lock weakly: when the Lock is destroyed or
/// unlocked, it stops at its next tick.
void start_watchdog(const std::shared_ptr<LockState>& lock, std::chrono::milliseconds interval,
                    std::function<void(const Error&)> on_lost);

/// Stops the lock's watchdog now (unlock). Loop thread only.
void stop_watchdog(LockState& lock);

}  // namespace redlock::detail

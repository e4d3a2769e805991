#pragma once
// Auto-extension for long work. The watchdog extends the lock to its TTL (the one
// lock_extension.hpp keeps) every `extend_every` (default: a third of the TTL), and never
// later than the validity allows: each round is started early enough that, should it fail
// on silent nodes (a whole node_timeout), one retry still fits and the loss is known with
// validity to spare. When no round can finish before the validity ends, or a quorum says
// the value is no longer ours, the lock is marked lost and `on_lost` runs — before the
// validity ends, so the owner can stop before another holder can exist. A loop thread
// that was stalled past the validity finds the lock expired and reports it; it never
// extends it.

#include <chrono>
#include <functional>
#include <memory>

#include <redlock/error.hpp>

namespace redlock::detail {

struct LockState;

/// Loop thread only. The watchdog holds the lock weakly: when the Lock is destroyed or
/// unlocked, it stops at its next tick.
void start_watchdog(const std::shared_ptr<LockState>& lock,
                    std::function<void(const Error&)> on_lost);

/// Stops the lock's watchdog now (unlock). Loop thread only.
void stop_watchdog(LockState& lock);

}  // namespace redlock::detail

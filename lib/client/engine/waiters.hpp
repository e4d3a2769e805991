#pragma once
// Wake one waiter per release: the lock() calls of a Client that wait on one key form a
// FIFO queue, and a release announcement wakes only the oldest one that is not already
// attempting. Waking them all made every waiter try at once for a lock only one of them
// can get (hundreds of Redis commands per handoff at 16 waiters).
//
// The wake is passed on whenever it would otherwise be lost: a woken waiter that gives up
// before its attempt ends, or whose attempt fails without showing a new holder (whose
// own release would announce again), hands it to the next idle waiter behind it. Liveness
// never depends on the wake alone: every waiter keeps its retry timer.
//
// Pure bookkeeping, loop thread only: it calls nobody. Each method returns whom to wake,
// so that the caller can finish its own bookkeeping first — a woken waiter may finish
// and leave the queue before the call that woke it returns.

#include <cstdint>
#include <optional>
#include <vector>

namespace redlock::detail {

class WaiterQueue {
 public:
  using Id = std::uint64_t;

  /// Appends `id`. It counts as attempting until its first attempt failed, so an
  /// announcement meanwhile does not wake it: that attempt sees the release anyway.
  void join(Id id);

  /// `id` skips its first attempt and waits to be woken in its turn: it is idle.
  void wait_for_turn(Id id);

  /// Whether a waiter that joined before `id` is still in the queue.
  bool has_waiters_before(Id id) const;

  /// A release was announced: the oldest idle waiter, which now holds the wake and should
  /// attempt at once. nullopt when none is idle; if some attempts are in flight (they may
  /// have reached the nodes before the release), the wake is kept for the next attempt
  /// to start or to fail.
  std::optional<Id> announce();

  /// `id` starts an attempt (its first, its timer's, or because it was woken). An attempt
  /// that starts while a wake is kept takes it.
  void attempt_started(Id id);

  struct AfterFailure {
    /// Take the kept wake: attempt again at once.
    bool retry_now = false;
    /// The waiter the wake passes to.
    std::optional<Id> wake;
  };
  /// `id`'s attempt failed; it keeps its place in the queue. `holder_seen`: one other
  /// owner holds the key on a quorum, so its release will announce again and a wake held
  /// by `id` is spent; otherwise (unreachable, timeout, split vote, no validity left) the
  /// wake passes on.
  AfterFailure attempt_failed(Id id, bool holder_seen);

  /// `id` leaves: it acquired the lock, gave up, or was cancelled. Returns the waiter to
  /// pass the wake to if `id` held it without acquiring.
  std::optional<Id> leave(Id id, bool acquired);

  bool empty() const noexcept { return waiters_.empty(); }

 private:
  struct Waiter {
    Id id;
    bool attempting = true;
    bool holds_wake = false;
  };

  std::vector<Waiter>::iterator find(Id id);
  // Wakes the oldest idle waiter from `from` on. Behind a waiter that passes the wake,
  // never before it: a wake that keeps failing travels the queue once and then stops,
  // instead of bouncing between two waiters at network speed.
  std::optional<Id> wake_from(std::vector<Waiter>::iterator from);

  std::vector<Waiter> waiters_;  // oldest first; a handful per key, so a vector
  bool wake_kept_ = false;
};

}  // namespace redlock::detail

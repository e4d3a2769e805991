#pragma once
// Reentrancy with an explicit owner: a ReentrantLock is the owner of one held Lock and
// counts how often its owner entered it. The count lives here, in the client, never on
// the nodes (docs/kinds.md argues why).

#include <mutex>

#include <redlock/error.hpp>
#include <redlock/export.hpp>
#include <redlock/lock.hpp>
#include <redlock/result.hpp>

namespace redlock {

/// A held Lock (of any kind: lock, lock_all, acquire_permit, read_lock, write_lock) that
/// its owner may enter again and must leave as often as it entered; the nodes let go at
/// the last unlock(). Whoever holds this object is the owner — not a thread: it may be
/// handed between threads, and two objects never share holds.
///
/// Thread-safety: every method may be called from any thread except the client's loop
/// thread (as Lock's synchronous methods); calls are serialised by an internal mutex.
/// The destructor releases the lock on the nodes whatever the count.
class REDLOCK_EXPORT ReentrantLock {
 public:
  /// Takes ownership of `lock` (held once). A lock that is not owned (moved from,
  /// unlocked) yields an object whose reenter() and unlock() fail with errc::not_held.
  explicit ReentrantLock(Lock lock) noexcept;
  ReentrantLock(const ReentrantLock&) = delete;
  ReentrantLock& operator=(const ReentrantLock&) = delete;
  ~ReentrantLock() = default;

  /// Enters again: the hold count grows by one. Sends nothing. Refused, with the count
  /// unchanged, once the lock's validity is over (errc::not_held), the watchdog lost it
  /// (errc::lock_lost), or it was released by the last unlock() (errc::not_held): an
  /// owner can never re-enter a lock it may no longer hold.
  Result<void> reenter();
  /// Leaves once. The last leave releases the lock on the nodes (Lock::unlock(), whose
  /// error it returns); if that release fails, the hold stays counted (holds() == 1) and
  /// unlock() may be called again to send it again. One more unlock() than holds is
  /// errc::not_held and sends nothing.
  Result<void> unlock();
  /// Current hold count: 0 once released.
  int holds() const;
  ///@{
  /// The held lock, for validity(), extend(), fencing_token(), nodes(). Releasing it
  /// directly ends every hold at once.
  Lock& lock() noexcept { return lock_; }
  const Lock& lock() const noexcept { return lock_; }
  ///@}

 private:
  mutable std::mutex mutex_;
  Lock lock_;
  int holds_;
};

}  // namespace redlock

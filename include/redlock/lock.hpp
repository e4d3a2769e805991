#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <redlock/error.hpp>
#include <redlock/export.hpp>
#include <redlock/result.hpp>

namespace redlock {

namespace detail {
struct LockState;
struct LockMaker;
}  // namespace detail

/// A held lock. Move-only; the destructor releases it on all nodes (waiting at most one
/// node_timeout, never throwing; on the loop thread, and for a release unlock_async()
/// already sent, without waiting). Methods may be called from any thread except the
/// client's loop thread (use the async forms there). A moved-from Lock, a closed client,
/// a forked child and an empty callback follow the client's edge rules (Client, "Edge
/// rules").
class REDLOCK_EXPORT Lock {
 public:
  /// Holds nothing, as a moved-from Lock does: a place to move a lock into later. Its
  /// unlock() succeeds at once and its extend() fails with errc::not_held.
  Lock() noexcept;
  /// Takes over the hold; the moved-from Lock holds nothing.
  Lock(Lock&&) noexcept;
  /// Releases the hold this Lock had, as its destructor would, then takes over `other`'s.
  Lock& operator=(Lock&&) noexcept;
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;
  ~Lock();

  /// The resource name passed to lock().
  const std::string& resource() const noexcept;
  /// Every key held: the key set of Client::lock_all(), else {resource()}.
  std::vector<std::string> resources() const;
  /// 128 random bits (hex) that identify this holder on every node.
  const std::string& value() const noexcept;
  /// Validity left now (steady clock): how long the caller may still act as the owner.
  /// Zero once expired, lost or released.
  std::chrono::milliseconds validity() const noexcept;
  /// The steady-clock instant the current validity ends (moved by extend()).
  std::chrono::steady_clock::time_point valid_until() const noexcept;
  /// The fencing token, when the lock was taken with LockOptions::fencing. A key set
  /// (Client::lock_all) has one token per key instead: see fencing_token(key).
  std::optional<std::uint64_t> fencing_token() const noexcept;
  /// The fencing token of one key this lock holds: for a key set taken with fencing, the
  /// key's own token (greater than every earlier holder's of that key, single-key locks
  /// included); for a single-key lock, fencing_token() when `key` is resource(). Empty
  /// for a key it does not hold or without fencing.
  std::optional<std::uint64_t> fencing_token(std::string_view key) const;
  /// Per-node outcomes of the acquisition.
  const std::vector<NodeOutcome>& nodes() const noexcept;

  /// Owner-checked PEXPIRE to `ttl` on all nodes. Succeeds iff a quorum extended and the
  /// new validity, measured from this call's start, is positive; `ttl` then becomes the
  /// lock's TTL, the one the watchdog (auto_extend) keeps extending to. Never extends a
  /// lock whose validity has ended, even while its value still sits on the nodes
  /// (errc::not_held), nor one the watchdog lost (errc::lock_lost). A shorter `ttl`
  /// lowers validity() at once, before the nodes answer: they may apply it even when the
  /// round fails. Extensions of one lock (this and the watchdog's) run one at a time.
  /// On the loop thread: errc::invalid_argument, nothing sent.
  Result<void> extend(std::chrono::milliseconds ttl);
  /// extend() without waiting, for code on the client's loop thread or chains of async
  /// calls. `done` runs exactly once: on the loop thread with the outcome (validity is
  /// moved before it runs), also when the checks extend() makes fail (unlocked, lost,
  /// expired, bad ttl: nothing is sent); at once on the calling thread when this Lock was
  /// moved from (errc::not_held) or the client is closed (errc::cancelled). `done` may be
  /// empty: the lock is extended all the same, and nobody is told.
  void extend_async(std::chrono::milliseconds ttl, std::function<void(Result<void>)> done);
  /// Owner-checked delete on all nodes; succeeds once a quorum no longer holds our value.
  /// From the first call on the lock is given up (validity() is 0, owned() false, no
  /// extension); a call after a failed one sends the release again, and a call after a
  /// confirmed one succeeds without sending anything. On the loop thread:
  /// errc::invalid_argument and nothing sent (use unlock_async there; the destructor also
  /// releases).
  Result<void> unlock();
  /// unlock() without waiting, for code on the client's loop thread or chains of
  /// lock_async(). `done` runs exactly once: on the loop thread once a quorum confirmed
  /// the release (or it failed), or with success when a release was already confirmed
  /// (nothing sent; also on the loop thread, never inside this call); at once on the
  /// calling thread when this Lock was moved from (success: nothing to release) or the
  /// client is closed (errc::cancelled; the lock is given up all the same). `done` may
  /// be empty (the release runs, nobody is told). An exception it throws is caught and
  /// reported on stderr. The Lock may be destroyed at once after it: the destructor then
  /// neither waits nor sends a release of its own, and if this release fails it is sent
  /// once more.
  void unlock_async(std::function<void(Result<void>)> done);

  /// True once the watchdog (auto_extend) failed to keep a quorum, or stopped at
  /// LockOptions::max_hold or max_extensions.
  bool lost() const noexcept;
  /// True until unlock() (or unlock_async) was first called, or the lock was moved from.
  bool owned() const noexcept;

 private:
  /// Made by the client (Client::lock() and the like), not by users.
  friend struct detail::LockMaker;
  explicit Lock(std::shared_ptr<detail::LockState> state) noexcept;

  std::shared_ptr<detail::LockState> state_;
};

}  // namespace redlock

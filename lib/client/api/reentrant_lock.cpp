#include <redlock/reentrant_lock.hpp>

#include "client/operations/operations.hpp"

namespace redlock {

ReentrantLock::ReentrantLock(Lock lock) noexcept
    : lock_(std::move(lock)), holds_(lock_.owned() ? 1 : 0) {}

Result<void> ReentrantLock::reenter() {
  std::lock_guard guard(mutex_);
  const auto what = "reenter " + detail::quote_key(lock_.resource());
  if (holds_ == 0 || !lock_.owned()) {
    return Error(make_error_code(errc::not_held), what + ": the lock is not held");
  }
  if (lock_.lost()) {
    return Error(make_error_code(errc::lock_lost), what + ": the watchdog lost this lock");
  }
  if (lock_.validity().count() <= 0) {
    return Error(make_error_code(errc::not_held),
                 what + ": the lock's validity is over; an expired lock is never re-entered");
  }
  ++holds_;
  return {};
}

Result<void> ReentrantLock::unlock() {
  std::lock_guard guard(mutex_);
  if (holds_ == 0) {
    return Error(make_error_code(errc::not_held),
                 "unlock " + detail::quote_key(lock_.resource()) +
                     ": more unlock() calls than holds; the lock was already released");
  }
  if (holds_ > 1) {
    --holds_;
    return {};
  }
  // The last hold is given up only once the release is: a release no quorum confirmed
  // may be sent again by calling unlock() again, as with Lock::unlock().
  auto released = lock_.unlock();
  if (released) holds_ = 0;
  return released;
}

int ReentrantLock::holds() const {
  std::lock_guard guard(mutex_);
  return holds_;
}

}  // namespace redlock

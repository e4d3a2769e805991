#pragma once
// Objects kept for reuse, one pool for the whole process. Whichever thread runs a
// client's loop takes and gives back: the loop's own thread, or (with leader/followers)
// a synchronous caller while it leads; a lock gives its outcome list back on whatever
// thread drops it. A pool per thread would fill up once for every such thread, and an
// object taken on one thread is often given back on another (a round outlives its
// decision until its slowest node answers), so each thread's pool would grow to its
// bound. A mutex that one loop thread at a time takes costs tens of nanoseconds, against
// the allocations it saves.

#include <cstddef>
#include <mutex>
#include <utility>
#include <vector>

namespace redlock::detail {

/// `T` is a movable handle to storage (a unique_ptr, a vector) whose default value owns
/// none.
template <typename T>
class SparePool {
 public:
  explicit SparePool(std::size_t bound) : bound_(bound) {}

  /// A kept object, or T{} when none is.
  T take() {
    std::lock_guard lock(mutex_);
    if (spares_.empty()) return T{};
    T spare = std::move(spares_.back());
    spares_.pop_back();
    return spare;
  }

  /// Keeps `spare` for a later take(); frees it when the pool holds its bound already.
  void give_back(T&& spare) noexcept {
    std::lock_guard lock(mutex_);
    if (spares_.size() >= bound_) return;
    try {
      spares_.push_back(std::move(spare));
    } catch (...) {
      // Out of memory while growing the pool: `spare` is simply freed.
    }
  }

 private:
  std::mutex mutex_;
  std::vector<T> spares_;  // guarded by mutex_
  const std::size_t bound_;
};

}  // namespace redlock::detail

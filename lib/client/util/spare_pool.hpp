#pragma once
// Objects kept for reuse, one pool for the whole process. Whichever thread runs a
// client's loop takes and gives back: the loop's own thread, or (with leader/followers)
// a synchronous caller while it leads; a lock gives its outcome list back on whatever
// thread drops it. A pool per thread would fill up once for every such thread, and an
// object taken on one thread is often given back on another (a round outlives its
// decision until its slowest node answers), so each thread's pool would grow to its
// bound. So the pool is shared, behind a mutex, with a small front per thread: a loop
// thread gives back and takes again a dozen times a lock cycle, and the mutex, taken
// each time, was 650 of a cycle's instructions. The front holds at most `front_size`
// objects per thread; what overflows it goes to the shared pool, and what a thread's
// front holds when it ends is freed.

#include <array>
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
    Front* front = this_thread_front();
    if (front != nullptr && front->pool == this && front->count > 0) {
      return std::move(front->items[--front->count]);
    }
    std::lock_guard lock(mutex_);
    if (spares_.empty()) return T{};
    T spare = std::move(spares_.back());
    spares_.pop_back();
    return spare;
  }

  /// Keeps `spare` for a later take(); frees it when the pool holds its bound already.
  void give_back(T&& spare) noexcept {
    if (Front* front = this_thread_front(); front != nullptr) {
      if (front->pool == nullptr) front->pool = this;  // a thread's front serves one pool of T
      if (front->pool == this && front->count < front_size) {
        front->items[front->count++] = std::move(spare);
        return;
      }
    }
    std::lock_guard lock(mutex_);
    if (spares_.size() >= bound_) return;
    try {
      spares_.push_back(std::move(spare));
    } catch (...) {
      // Out of memory while growing the pool: `spare` is simply freed.
    }
  }

  static constexpr std::size_t front_size = 8;

 private:
  // The objects this thread gave back last, for the pool named (the first of type T this
  // thread gave back to; others of the same type go through their mutex).
  struct Front {
    explicit Front(bool* gone) noexcept : gone(gone) {}
    ~Front() { *gone = true; }
    Front(const Front&) = delete;
    Front& operator=(const Front&) = delete;
    bool* gone;
    const SparePool* pool = nullptr;
    std::array<T, front_size> items{};
    std::size_t count = 0;
  };
  // Null once this thread's front is destroyed (the thread is ending, or the process is
  // exiting and a lock is dropped in a static destructor): the shared pool serves then.
  static Front* this_thread_front() noexcept {
    thread_local bool gone = false;  // trivially destructible: still readable then
    if (gone) return nullptr;
    thread_local Front front(&gone);
    return &front;
  }

  std::mutex mutex_;
  std::vector<T> spares_;  // guarded by mutex_
  const std::size_t bound_;
};

}  // namespace redlock::detail

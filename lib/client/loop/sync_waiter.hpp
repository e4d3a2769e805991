#pragma once
// What a synchronous caller waits on until its answer came (LoopThread::call): a
// semaphore posted once by the answer, and the links of the followers' queue when it
// waits behind a leading caller (LeaderFollowers).

#include <semaphore.h>

#include <atomic>
#include <cstdint>

namespace redlock::detail {

class SyncWaiter {
 public:
  SyncWaiter() { ::sem_init(&woken_, 0, 0); }
  ~SyncWaiter() { ::sem_destroy(&woken_); }
  SyncWaiter(const SyncWaiter&) = delete;
  SyncWaiter& operator=(const SyncWaiter&) = delete;

 private:
  friend class LoopThread;
  friend class LeaderFollowers;

  /// Sleeps until the next post of the semaphore.
  void sleep() {
    while (::sem_wait(&woken_) != 0) {
      // EINTR: a signal handler ran; the wake is still to come.
    }
  }

  sem_t woken_;
  // Written before the semaphore's post (under the leadership mutex with leader/followers);
  // read without a lock by the waiter once woken.
  std::atomic<bool> done_{false};
  // Guarded by the leadership mutex.
  bool queued_ = false;
  SyncWaiter* next_ = nullptr;
  SyncWaiter* previous_ = nullptr;
  // The count of relayed events (LeaderFollowers::relay_to_background) once this
  // waiter's caller had relayed its last one; 0: none. Touched by that caller alone.
  std::uint64_t relayed_upto_ = 0;
};

/// How a synchronous call's wait ended.
enum class Waited {
  answered,  ///< the answer came (LoopThread::finish)
  refused,   ///< the loop takes no more work (or forked): the start did not run, nor will
  abandoned  ///< the wait's bound passed, or the loop ended without an answer: the start ran
};

}  // namespace redlock::detail

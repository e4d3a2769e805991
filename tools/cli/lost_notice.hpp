#pragma once
// How the watchdog's on_lost (on the client's loop thread, which must not block) tells
// the main thread that the lock is gone.

#include <mutex>
#include <optional>

#include <redlock/error.hpp>

#include "wakeup.hpp"

namespace redlock::cli {

class LostNotice {
 public:
  /// Called from on_lost: keeps the first error and wakes the main thread.
  void post(const Error& error) {
    {
      std::lock_guard guard(mutex_);
      if (error_) return;
      error_ = error;
    }
    wakeup_.notify();
  }

  /// The error once posted.
  std::optional<Error> take() {
    wakeup_.drain();
    std::lock_guard guard(mutex_);
    return error_;
  }

  int fd() const noexcept { return wakeup_.fd(); }

 private:
  std::mutex mutex_;
  std::optional<Error> error_;  // guarded by mutex_
  Wakeup wakeup_;
};

}  // namespace redlock::cli

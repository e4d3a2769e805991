#pragma once
// A one-shot uv timer that owns its handle: close() may be called from inside the
// timer's own callback, and the memory is freed only in libuv's close callback.

#include <chrono>
#include <functional>

#include "net/closing.hpp"

namespace redlock::net {

class Timer;
using TimerPtr = ClosingPtr<Timer>;

class Timer {
 public:
  /// Loop thread only.
  static TimerPtr create(uv_loop_s* loop);

  /// (Re)arms the timer; `fire` runs once on the loop after `delay`.
  void start(std::chrono::milliseconds delay, std::function<void()> fire);
  void stop();
  /// Stops the timer and frees it on a later loop turn (TimerPtr calls it).
  void close();

 private:
  Timer() = default;
  ~Timer() = default;
  struct Impl;
  friend struct Impl;
};

}  // namespace redlock::net

#pragma once
// The thread that does all of a Client's I/O, and the one way other threads reach it: a
// task queue drained by a uv_async_t (uv_async_send coalesces wakeups, so a burst of
// posts costs one loop iteration).

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

struct uv_loop_s;
struct uv_async_s;

namespace redlock::detail {

class LoopThread {
 public:
  /// `external` null: creates a loop and a thread that runs it. Otherwise the caller's
  /// loop, which the caller runs; then the constructor must be called on that loop's
  /// thread or before the loop runs.
  explicit LoopThread(uv_loop_s* external = nullptr);
  /// Requires stop() to have run.
  ~LoopThread();
  LoopThread(const LoopThread&) = delete;
  LoopThread& operator=(const LoopThread&) = delete;

  /// Runs `task` on the loop thread, after every task posted before it. Returns false
  /// (and drops the task) once stop() began.
  bool post(std::function<void()> task);

  /// True when called from a callback of the loop.
  bool on_loop_thread() const noexcept;

  uv_loop_s* loop() const noexcept { return loop_; }

  /// Runs `last` on the loop after every task posted before, then closes the wakeup
  /// handle; `last` must close every other handle its users own so the loop can end.
  /// Waits for `last` to have run (and, for an own loop, for the thread to finish),
  /// except when called on the loop thread itself: then `last` runs at once and an own
  /// thread finishes in the background. Idempotent.
  void stop(std::function<void()> last);

 private:
  struct Shared;
  static void drain(uv_async_s* handle);

  // Shared with the thread, which may outlive this object when stop() ran on it.
  std::shared_ptr<Shared> shared_;
  uv_loop_s* loop_ = nullptr;
  std::thread thread_;
  bool own_loop_ = false;
};

}  // namespace redlock::detail

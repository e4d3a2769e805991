#pragma once
// The thread that does all of a Client's I/O, and the one way other threads reach it: a
// task queue drained by a uv_async_t (uv_async_send coalesces wakeups, so a burst of
// posts costs one loop iteration).
//
// With the caller's loop (Options::loop) there is no thread of ours: the loop thread is
// whichever thread runs that loop, recognised from the loop's first iteration after
// construction (a wakeup is sent at once for that).

#include <atomic>
#include <functional>
#include <future>
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
  /// loop, which the caller runs.
  explicit LoopThread(uv_loop_s* external = nullptr);
  /// Requires stop() to have been called. Joins an own thread (detaches it when called on
  /// that thread itself, from one of its callbacks).
  ~LoopThread();
  LoopThread(const LoopThread&) = delete;
  LoopThread& operator=(const LoopThread&) = delete;

  /// Runs `task` on the loop thread, after every task posted before it. Returns false
  /// (and drops the task) once stop() was called.
  bool post(std::function<void()> task);

  /// True when called from a callback of the loop (once the loop thread is known).
  bool on_loop_thread() const noexcept;

  uv_loop_s* loop() const noexcept { return loop_; }
  bool own_loop() const noexcept { return own_loop_; }

  /// Begins the shutdown, once: from this call on posts fail; `last` runs on the loop
  /// after every task posted before, and must call `closed` (then or later, on the loop)
  /// once every handle of its users is closed; then the wakeup handle closes and an own
  /// loop's thread ends. Returns true for the call that began it. Never waits.
  bool stop(std::function<void(std::function<void()> closed)> last);

  /// Waits until an own loop's thread has finished. Returns at once on the loop thread
  /// and with the caller's loop (which may not be running). Safe from several threads.
  void wait_finished();

 private:
  struct Shared;
  static void drain(uv_async_s* handle);

  // Shared with the thread and the wakeup handle, which may outlive this object when
  // stop() ran on the loop thread or the loop is the caller's.
  std::shared_ptr<Shared> shared_;
  uv_loop_s* loop_ = nullptr;
  std::thread thread_;
  bool own_loop_ = false;
};

}  // namespace redlock::detail

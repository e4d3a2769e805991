#pragma once
// The thread that does all of a Client's I/O, and the one way other threads reach it: a
// task queue drained by a uv_async_t (uv_async_send coalesces wakeups, so a burst of
// posts costs one loop iteration).
//
// With the caller's loop (Options::loop) there is no thread of ours: the loop thread is
// whichever thread runs that loop, recognised from the loop's first iteration after
// construction (a wakeup is sent at once for that).
//
// In a child process forked after construction (forked()) there is no loop thread, and
// the loop's descriptors are the parent's: posts, calls and stop() are refused without
// touching them, and the destructor neither joins nor closes anything (fork_guard.hpp).

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "client/loop/fork_guard.hpp"
#include "client/loop/sync_waiter.hpp"

struct uv_loop_s;
struct uv_async_s;

namespace redlock::detail {

class LoopThread {
 public:
  /// `external` null: creates a loop and a thread that runs it. Otherwise the caller's
  /// loop, which the caller runs. `callers_lead` (own loop only): synchronous callers may
  /// run the loop themselves (leader_followers.hpp).
  explicit LoopThread(uv_loop_s* external = nullptr, bool callers_lead = false);
  /// Requires stop() to have been called, except in a forked child. Joins an own thread
  /// (detaches it when called on that thread itself, from one of its callbacks). In a
  /// forked child it leaves everything behind: the thread is not there to join.
  ~LoopThread();
  LoopThread(const LoopThread&) = delete;
  LoopThread& operator=(const LoopThread&) = delete;

  /// Runs `task` on the loop thread, after every task posted before it. Returns false
  /// (and drops the task) once stop() was called, and in a forked child.
  bool post(std::function<void()> task);

  /// True when called from a callback of the loop (once the loop thread is known); never
  /// in a forked child.
  bool on_loop_thread() const noexcept;

  /// The process this loop belongs to: forked() is true in a child forked since.
  const ForkGuard& fork_guard() const noexcept { return fork_guard_; }

  uv_loop_s* loop() const noexcept { return loop_; }
  bool own_loop() const noexcept { return own_loop_; }

  /// Begins the shutdown, once: from this call on posts fail; `last` runs on the loop
  /// after every task posted before, and must call `closed` (then or later, on the loop)
  /// once every handle of its users is closed; then the wakeup handle closes and an own
  /// loop's thread ends. Returns true for the call that began it. Never waits. Does
  /// nothing in a forked child.
  bool stop(std::function<void(std::function<void()> closed)> last);

  /// Waits until an own loop's thread has finished. Returns at once on the loop thread,
  /// with the caller's loop (which may not be running) and in a forked child. Safe from
  /// several threads.
  void wait_finished();

  /// A synchronous caller's wait, and how it ended (sync_waiter.hpp).
  using Waiter = SyncWaiter;
  using Waited = detail::Waited;
  /// The one way a synchronous call waits: runs `start` on the loop (its answer must
  /// reach finish(waiter)) and returns once finish() ran, or `until` passed. With
  /// `callers_lead`, a caller that finds the client idle leads (without `until`): it runs
  /// the loop itself (leader_followers.hpp); otherwise it posts `start` and sleeps until
  /// its answer.
  Waited call(Waiter& waiter, std::function<void()> start,
              std::optional<std::chrono::steady_clock::time_point> until);
  /// The answer of `waiter`'s operation came (on the loop, from whoever runs it).
  void finish(Waiter& waiter);

 private:
  struct Shared;
  static Waited wait(Waiter& waiter, std::optional<std::chrono::steady_clock::time_point> until);
  static void drain(uv_async_s* handle);
  bool begin_stop(std::function<void(std::function<void()> closed)> last);

  // Shared with the thread and the wakeup handle, which may outlive this object when
  // stop() ran on the loop thread or the loop is the caller's.
  std::shared_ptr<Shared> shared_;
  uv_loop_s* loop_ = nullptr;
  std::thread thread_;
  bool own_loop_ = false;
  ForkGuard fork_guard_;
};

}  // namespace redlock::detail

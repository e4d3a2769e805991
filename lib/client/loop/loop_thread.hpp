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
// the loop's descriptors are the parent's: posts, lead() and stop() are refused without
// touching them, and the destructor neither joins nor closes anything (fork_guard.hpp).

#include <semaphore.h>

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
#include "client/util/small_function.hpp"

struct uv_loop_s;
struct uv_async_s;

namespace redlock::detail {

class LoopThread {
 public:
  /// `external` null: creates a loop and a thread that runs it. Otherwise the caller's
  /// loop, which the caller runs. `callers_lead` (own loop only): synchronous callers may
  /// run the loop themselves (lead()).
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

  /// Leader/followers (callers_lead() only). Whoever runs the loop leads: the background thread,
  /// or a synchronous caller, so the library's own callbacks run on whichever thread leads
  /// (on_loop_thread() is true there); the application's run on the background thread
  /// alone (defer_to_background). A caller that finds nobody leading takes the loop,
  /// starts its operation and runs the loop on its own thread until its answer came (no
  /// handoff). One that finds a leader follows: it posts its start and sleeps until its
  /// answer (one wake), and while any follower waits the background thread runs the loop
  /// as a plain loop thread, so nobody is ever handed the loop. When idle within 100 ms
  /// of a synchronous call, the background thread polls the loop's descriptor from
  /// outside the loop, so a caller never has to wake it to take the loop (otherwise it
  /// runs the loop as a plain loop thread, and the next caller follows); and a caller that gives
  /// the loop up leaves it unwatched for up to a millisecond (or the next timer) rather than wake
  /// it, so a thread that calls again at once finds the loop free. A caller's turn that lasts
  /// longer (a wait for a held key, a slow node) is slept through: that caller wakes the
  /// background thread once as it gives the loop up. Posts and stop() wake it at once.
  class Waiter {
   public:
    Waiter();
    ~Waiter();
    Waiter(const Waiter&) = delete;
    Waiter& operator=(const Waiter&) = delete;

   private:
    friend class LoopThread;
    sem_t woken_;
    // Written under the leadership mutex; read without it by the waiter once woken.
    std::atomic<bool> done_{false};
    // Guarded by the leadership mutex.
    bool queued_ = false;
    Waiter* next_ = nullptr;
    Waiter* previous_ = nullptr;
    // The count of relayed events (relay_to_background) once this waiter's caller had
    // relayed its last one; 0: none. Touched by that caller alone.
    std::uint64_t relayed_upto_ = 0;
  };
  /// How a synchronous call's wait ended.
  enum class Waited {
    answered,  ///< finish(waiter) ran
    refused,   ///< the loop takes no more work (or forked): `start` did not run, nor will
    abandoned  ///< `until` passed, or the loop ended without an answer: `start` ran
  };
  /// The one way a synchronous call waits: runs `start` on the loop (its answer must
  /// reach finish(waiter)) and returns once finish() ran, or `until` passed. A caller that
  /// finds the client idle leads (callers_lead, without `until`): it runs the loop itself;
  /// otherwise it posts `start` and sleeps until its answer.
  Waited call(Waiter& waiter, std::function<void()> start,
              std::optional<std::chrono::steady_clock::time_point> until);
  /// The answer of `waiter`'s operation came (on the loop, from whoever runs it).
  void finish(Waiter& waiter);

  /// Application code (an async result, on_lost) must not run on a synchronous caller
  /// that leads: the headers promise the loop thread, and the caller may hold locks of its
  /// own. caller_leads() says whether this thread is one; defer_to_background() then
  /// queues the call for the background thread, which runs it before anything else once
  /// it takes the loop, and the caller stops leading at the end of the loop's turn (it
  /// waits for its answer as a follower).
  using ApplicationCall = SmallFunction<void(), 96>;
  static bool caller_leads() noexcept;
  /// Requires caller_leads().
  static void defer_to_background(ApplicationCall call);
  /// The observer's and the log's calls (which must not block and need no loop) heard
  /// while a caller leads: queued for the background thread, which runs them in order as
  /// soon as it is free (also while the caller still leads, and before anything it hears
  /// itself once it takes the loop). The caller keeps the loop: observing a client does
  /// not change how its synchronous calls reach the loop. Its call returns once what it
  /// relayed was told (await_relayed). Requires caller_leads().
  static void relay_to_background(ApplicationCall call);

 private:
  struct Shared;
  Waited lead(Waiter& waiter, std::function<void()> start);
  static Waited wait(Waiter& waiter, std::optional<std::chrono::steady_clock::time_point> until);
  static void drain(uv_async_s* handle);
  // Runs the relayed calls, `lock` (lead_mutex) released while they run.
  static void run_relayed(Shared& shared, std::unique_lock<std::mutex>& lock);
  // Waits until the events `waiter`'s caller relayed while it led were told.
  static void await_relayed(Shared& shared, const Waiter& waiter);
  bool begin_stop(std::function<void(std::function<void()> closed)> last);
  static void run_background(Shared& shared);
  static bool run_until_done(Shared& shared, Waiter& waiter);
  // Whether a synchronous call came within the last sync_calls_window.
  static bool sync_calls_lately(const Shared& shared);
  // A leading caller gives the loop up (lead_mutex held).
  static void give_up(Shared& shared);
  // The leading caller gives the loop to the background thread before its answer came.
  static void follow_after_yield(Shared& shared, Waiter& waiter);
  // The client whose loop this thread runs inside a synchronous call (null: none).
  static thread_local Shared* leading_caller_of_;
  static void release(Shared& shared);
  static void call_background(Shared& shared);
  // Takes a follower out of the queue (lead_mutex held).
  static void unlink(Shared& shared, Waiter& waiter);

  // Shared with the thread and the wakeup handle, which may outlive this object when
  // stop() ran on the loop thread or the loop is the caller's.
  std::shared_ptr<Shared> shared_;
  uv_loop_s* loop_ = nullptr;
  std::thread thread_;
  bool own_loop_ = false;
  ForkGuard fork_guard_;
};

}  // namespace redlock::detail

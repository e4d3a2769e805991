#pragma once
// Leader/followers (Options::sync_calls = SyncCalls::lead, a client's own loop only):
// whoever runs the loop leads, the background thread or a synchronous caller, so the
// library's own callbacks run on whichever thread leads (LoopThread::on_loop_thread() is
// true there); the application's run on the background thread alone
// (defer_to_background). A caller that finds nobody leading takes the loop, starts its
// operation and runs the loop on its own thread until its answer came (no handoff). One
// that finds a leader follows: it posts its start and sleeps until its answer (one
// wake), and while any follower waits the background thread runs the loop as a plain
// loop thread, so nobody is ever handed the loop. When idle within 100 ms of a
// synchronous call, the background thread polls the loop's descriptor from outside the
// loop, so a caller never has to wake it to take the loop (otherwise it runs the loop as
// a plain loop thread, and the next caller follows); and a caller that gives the loop up
// leaves it unwatched for up to a millisecond (or the next timer) rather than wake it, so
// a thread that calls again at once finds the loop free. A caller's turn that lasts
// longer (a wait for a held key, a slow node) is slept through: that caller wakes the
// background thread once as it gives the loop up. Posts and stop() wake it at once.
// Why this exists and what it costs: docs/performance.md.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "client/loop/sync_waiter.hpp"
#include "core/small_function.hpp"

struct uv_loop_s;
struct uv_async_s;

namespace redlock::detail {

class LeaderFollowers {
 public:
  /// What the leadership needs of the loop thread it belongs to (LoopThread), all of it
  /// living as long as this object.
  struct Loop {
    uv_loop_s* loop;
    /// The task queue's handle, and what drains it: a caller that takes the loop runs
    /// the tasks posted before its call first, as they would have run before it.
    uv_async_s* tasks;
    void (*drain)(uv_async_s* tasks);
    /// Whether the task queue still takes work (LoopThread::stop not yet called), and
    /// whether a task waits in it.
    std::function<bool()> accepting;
    std::function<bool()> tasks_waiting;
    /// The thread that runs the loop now (LoopThread::on_loop_thread).
    std::atomic<std::thread::id>* loop_thread_id;
  };

  explicit LeaderFollowers(Loop loop);
  ~LeaderFollowers();
  LeaderFollowers(const LeaderFollowers&) = delete;
  LeaderFollowers& operator=(const LeaderFollowers&) = delete;

  /// The background thread's whole life: returns once the loop has nothing left.
  void run_background();

  /// How a synchronous call went to the loop.
  enum class Went { answered, abandoned, refused, follow };
  /// Leads when nobody does: runs `start` and the loop on this thread until `waiter` is
  /// answered. Otherwise queues `waiter` as a follower and returns `follow` (`start`
  /// untouched): the caller posts it, and unfollow()s if the post is refused.
  Went lead(SyncWaiter& waiter, std::function<void()>& start);
  void unfollow(SyncWaiter& waiter);
  /// `waiter`'s operation answered (on the loop, from whoever runs it).
  void finish(SyncWaiter& waiter);
  /// A task was posted, or stop() called: the background thread must not leave the loop
  /// unattended.
  void posted();

  /// Application code (an async result, on_lost) must not run on a synchronous caller
  /// that leads: the headers promise the loop thread, and the caller may hold locks of
  /// its own. caller_leads() says whether this thread is one; defer_to_background() then
  /// queues the call for the background thread, which runs it before anything else once
  /// it takes the loop, and the caller stops leading at the end of the loop's turn (it
  /// waits for its answer as a follower).
  using ApplicationCall = core::SmallFunction<void(), 96>;
  static bool caller_leads() noexcept;
  /// Requires caller_leads().
  static void defer_to_background(ApplicationCall call);
  /// The observer's and the log's calls (which must not block and need no loop) heard
  /// while a caller leads: queued for the background thread, which runs them in order
  /// (also while the caller still leads, and before anything it hears itself once it
  /// takes the loop). The caller keeps the loop: observing a client does not change how
  /// its synchronous calls reach the loop. Its call returns once what it relayed was
  /// told (await_relayed). Requires caller_leads().
  static void relay_to_background(ApplicationCall call);

 private:
  enum class Holder { none, background, caller, gone };

  bool run_until_done(SyncWaiter& waiter);
  // Whether a synchronous call came within the last sync_calls_window.
  bool sync_calls_lately() const;
  // A leading caller gives the loop up (mutex_ held).
  void give_up();
  // The leading caller gives the loop to the background thread before its answer came.
  void follow_after_yield(SyncWaiter& waiter);
  void release();
  // Wakes the background thread wherever it waits: parked, or watching the loop.
  void wake_background();
  // Runs the relayed calls, `lock` (mutex_) released while they run.
  void run_relayed(std::unique_lock<std::mutex>& lock);
  // Waits until the events `waiter`'s caller relayed while it led were told.
  void await_relayed(const SyncWaiter& waiter);
  // Queues a follower (mutex_ held).
  void link(SyncWaiter& waiter);
  // Takes a follower out of the queue (mutex_ held).
  void unlink(SyncWaiter& waiter);

  // The leadership this thread holds inside a synchronous call (null: none).
  static thread_local LeaderFollowers* leading_caller_of_;

  const Loop loop_;
  // Wakes the background thread out of its poll of the loop's descriptor.
  int kick_ = -1;

  std::mutex mutex_;
  // Everything below is guarded by mutex_, except where said.
  Holder holder_ = Holder::none;
  // The background thread waits here while a caller leads, and only then does a caller
  // that gives the loop up have to wake it.
  std::condition_variable lead_free_;
  bool background_parked_ = false;
  // Callers' turns at the loop so far: the background thread looks again a grace after
  // a turn began, and a turn that lasts beyond that (a caller waiting for a held key or
  // a slow node) is slept through, the caller waking it as it gives the loop up.
  std::uint64_t caller_turns_ = 0;
  bool background_sleeps_through_turn_ = false;
  // A caller that gives the loop up leaves the parked background thread asleep for up to
  // unattended_grace (or the loop's next deadline), so that a caller coming back at once
  // finds the loop free and nobody was woken. During that time socket events wait (the
  // next leader or the background thread reads them); posted tasks wake it (posted()).
  // Read without the lock by posted(); written under it.
  std::atomic<bool> unattended_{false};
  std::chrono::steady_clock::time_point unattended_until_;
  bool background_called_ = false;
  // When the background thread's poll of the loop gives up (none: no timer). A caller
  // that leaves an earlier timer behind kicks it.
  std::optional<std::chrono::steady_clock::time_point> background_deadline_;
  // Set with the deadline by a caller that woke the parked background thread: it goes
  // back to watching without running the loop first.
  bool deadline_handed_over_ = false;
  // The followers: callers that found a leader and wait for their answer. While any
  // wait, the background thread runs the loop as a plain loop thread.
  SyncWaiter* first_ = nullptr;
  SyncWaiter* last_ = nullptr;
  // Application calls that came due while a caller led (defer_to_background), for the
  // background thread to run first when it takes the loop.
  std::vector<ApplicationCall> deferred_;
  // Observer and log events heard while a caller led (relay_to_background), for the
  // background thread to run in order, whoever holds the loop.
  std::vector<ApplicationCall> relayed_;
  // Events relayed and told so far: a caller that relayed waits for its own to be told
  // before its call returns (await_relayed), as observer.hpp promises.
  std::uint64_t relayed_count_ = 0;
  std::uint64_t told_count_ = 0;
  std::condition_variable relayed_told_;
  // Set by the leading caller that deferred a call: it stops leading at the end of the
  // loop's turn. Touched by the leading caller alone, reset as it gives the loop up.
  bool yield_requested_ = false;
  // The leading caller's own wait (touched by it alone, like yield_requested_).
  SyncWaiter* leading_waiter_ = nullptr;
  // When a synchronous call last came (steady_clock ticks; 0: never). Without one for
  // a while the background thread runs the loop as a plain loop thread.
  std::atomic<std::chrono::steady_clock::rep> last_sync_call_{0};
};

}  // namespace redlock::detail

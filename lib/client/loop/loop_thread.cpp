#include "client/loop/loop_thread.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>

namespace redlock::detail {

struct LoopThread::Shared {
  std::mutex mutex;
  std::vector<std::function<void()>> tasks;  // guarded by mutex
  // The batch being run (loop thread only), swapped with `tasks` so that both keep their
  // capacity and a post does not allocate.
  std::vector<std::function<void()>> running;
  // Set (under mutex) by the first stop(). From then on nobody but stop() itself sends
  // to the wakeup handle, so it can be closed without a send racing the close.
  bool stopping = false;
  uv_async_t wakeup{};
  std::atomic<std::thread::id> loop_thread_id{};
  std::unique_ptr<uv_loop_t> own_loop;
  std::promise<void> finished;
  std::shared_future<void> finished_future = finished.get_future().share();
  // Keeps this object alive while the wakeup handle is open.
  std::shared_ptr<Shared> self_while_open;
  // Leader/followers (Options::sync_calls): set once, before the thread starts.
  bool callers_lead = false;
  enum class Holder { none, background, caller, gone };
  std::mutex lead_mutex;
  // Everything below is guarded by lead_mutex.
  Holder holder = Holder::none;
  // The background thread waits here while a caller leads, and only then does a caller
  // that gives the loop up have to wake it.
  std::condition_variable lead_free;
  bool background_parked = false;
  // Callers' turns at the loop so far: the background thread looks again a grace after
  // a turn began, and a turn that lasts beyond that (a caller waiting for a held key or
  // a slow node) is slept through, the caller waking it as it gives the loop up.
  std::uint64_t caller_turns = 0;
  bool background_sleeps_through_turn = false;
  // A caller that gives the loop up leaves the parked background thread asleep for up to
  // unattended_grace (or the loop's next deadline), so that a caller coming back at once
  // finds the loop free and nobody was woken. During that time socket events wait (the
  // next leader or the background thread reads them); posted tasks wake it (post()).
  // Read without the lock by post(); written under it.
  std::atomic<bool> unattended{false};
  std::chrono::steady_clock::time_point unattended_until;
  bool background_called = false;
  // When the background thread's poll of the loop gives up (none: no timer). A caller
  // that leaves an earlier timer behind kicks it through `kick`, an eventfd it polls
  // beside the loop's descriptor.
  std::optional<std::chrono::steady_clock::time_point> background_deadline;
  // Set with the deadline by a caller that woke the parked background thread: it goes
  // back to watching without running the loop first.
  bool deadline_handed_over = false;
  int kick = -1;
  // The followers: callers that found a leader and wait for their answer. While any
  // wait, the background thread runs the loop as a plain loop thread.
  LoopThread::Waiter* first = nullptr;
  LoopThread::Waiter* last = nullptr;
  // Application calls that came due while a caller led (defer_to_background), for the
  // background thread to run first when it takes the loop.
  std::vector<LoopThread::ApplicationCall> deferred;
  // Observer and log events heard while a caller led (relay_to_background), for the
  // background thread to run in order as soon as it is free, whoever holds the loop.
  std::vector<LoopThread::ApplicationCall> relayed;
  // Events relayed and told so far: a caller that relayed waits for its own to be told
  // before its call returns (await_relayed), as observer.hpp promises.
  std::uint64_t relayed_count = 0;
  std::uint64_t told_count = 0;
  std::condition_variable relayed_told;
  // Set by the leading caller that deferred a call: it stops leading at the end of the
  // loop's turn. Touched by the leading caller alone, reset as it gives the loop up.
  bool yield_requested = false;
  // The leading caller's own wait (touched by it alone, like yield_requested).
  LoopThread::Waiter* leading_waiter = nullptr;
  // When a synchronous call last came (steady_clock ticks; 0: never). Without one for
  // a while the background thread runs the loop as a plain loop thread.
  std::atomic<std::chrono::steady_clock::rep> last_sync_call{0};
};

namespace {

[[noreturn]] void fail(const char* what, int status) {
  std::fprintf(stderr, "redlock: %s: %s\n", what, uv_strerror(status));
  std::abort();
}

}  // namespace

LoopThread::LoopThread(uv_loop_s* external, bool callers_lead)
    : shared_(std::make_shared<Shared>()) {
  if (external == nullptr) {
    shared_->own_loop = std::make_unique<uv_loop_t>();
    if (int status = uv_loop_init(shared_->own_loop.get()); status < 0) {
      fail("uv_loop_init", status);
    }
    loop_ = shared_->own_loop.get();
    own_loop_ = true;
  } else {
    loop_ = external;
  }
  shared_->wakeup.data = shared_.get();
  if (int status = uv_async_init(loop_, &shared_->wakeup, &LoopThread::drain); status < 0) {
    fail("uv_async_init", status);
  }
  shared_->self_while_open = shared_;
  if (own_loop_) {
    shared_->callers_lead = callers_lead;
    if (callers_lead) {
      shared_->kick = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
      if (shared_->kick < 0) fail("eventfd", uv_translate_sys_error(errno));
    }
    thread_ = std::thread([shared = shared_] {
      if (shared->callers_lead) {
        run_background(*shared);
        ::close(shared->kick);
      } else {
        shared->loop_thread_id = std::this_thread::get_id();
        uv_run(shared->own_loop.get(), UV_RUN_DEFAULT);
      }
      // Every handle is closed once uv_run returns; the loop can go.
      if (uv_loop_close(shared->own_loop.get()) != 0) {
        // A handle is still open: a bug, but leaking the loop beats crashing.
        (void)shared->own_loop.release();
      }
      shared->finished.set_value();
    });
  } else {
    // The caller's loop thread is whichever thread runs the loop: it drains this wakeup
    // in the loop's first iteration and is known from then on.
    uv_async_send(&shared_->wakeup);
  }
}

LoopThread::~LoopThread() {
  if (fork_guard_.forked()) {
    // The thread is the parent's (joining would wait forever), and so are the loop and
    // its handles: closing them would change the parent's epoll set.
    if (thread_.joinable()) thread_.detach();
    ForkGuard::leak(std::move(shared_));
    return;
  }
  if (thread_.joinable()) {
    // A caller that leads is inside the loop too: joining would wait for itself.
    if (thread_.get_id() == std::this_thread::get_id() || on_loop_thread()) {
      thread_.detach();
    } else {
      thread_.join();
    }
  }
}

bool LoopThread::post(std::function<void()> task) {
  // Before the mutex: a parent's thread may have held it at the fork, for good.
  if (fork_guard_.forked()) return false;
  {
    std::lock_guard lock(shared_->mutex);
    if (shared_->stopping) return false;
    shared_->tasks.push_back(std::move(task));
    // Under the mutex: stop() cannot close the handle between the push and the send.
    uv_async_send(&shared_->wakeup);
  }
  if (shared_->unattended.load()) call_background(*shared_);
  return true;
}

bool LoopThread::on_loop_thread() const noexcept {
  // A child forked from a callback runs on a copy of the loop thread, with its id.
  return shared_->loop_thread_id.load() == std::this_thread::get_id() && !fork_guard_.forked();
}

void LoopThread::drain(uv_async_s* handle) {
  auto* shared = static_cast<Shared*>(handle->data);
  shared->loop_thread_id = std::this_thread::get_id();
  auto& tasks = shared->running;
  {
    std::lock_guard lock(shared->mutex);
    tasks.swap(shared->tasks);
  }
  for (auto& task : tasks) task();
  tasks.clear();
}

bool LoopThread::stop(std::function<void(std::function<void()> closed)> last) {
  if (fork_guard_.forked()) return false;
  if (!begin_stop(std::move(last))) return false;
  if (shared_->unattended.load()) call_background(*shared_);
  return true;
}

bool LoopThread::begin_stop(std::function<void(std::function<void()> closed)> last) {
  std::lock_guard lock(shared_->mutex);
  if (shared_->stopping) return false;
  shared_->stopping = true;
  shared_->tasks.push_back([shared = shared_, last = std::move(last)]() mutable {
    last([shared] {
      // Tasks queued after this one (none can be posted once stopping) would be lost;
      // their owners expect exactly one call, so any left still run.
      std::vector<std::function<void()>> rest;
      {
        std::lock_guard lock(shared->mutex);
        rest.swap(shared->tasks);
      }
      for (auto& task : rest) task();
      uv_close(reinterpret_cast<uv_handle_t*>(&shared->wakeup), [](uv_handle_t* handle) {
        auto* self = static_cast<Shared*>(handle->data);
        if (!self->own_loop) self->finished.set_value();
        self->self_while_open.reset();  // may free *self
      });
    });
  });
  uv_async_send(&shared_->wakeup);
  return true;
}

void LoopThread::wait_finished() {
  // A forked child's loop thread never finishes: it is not there.
  if (!own_loop_ || on_loop_thread() || fork_guard_.forked()) return;
  auto finished = shared_->finished_future;  // a copy per waiting thread
  finished.wait();
}

// --- leader/followers ---------------------------------------------------------------

thread_local LoopThread::Shared* LoopThread::leading_caller_of_ = nullptr;

LoopThread::Waiter::Waiter() {
  ::sem_init(&woken_, 0, 0);
}

LoopThread::Waiter::~Waiter() {
  ::sem_destroy(&woken_);
}

namespace {

// How long a caller that gives the loop up may leave it unwatched (Shared::unattended):
// long enough for a thread that locks and unlocks in a row to come back.
constexpr std::chrono::microseconds unattended_grace{1000};

// How long after a synchronous call the background thread keeps the loop free for the
// next one (watching it from outside): far longer than a thread's gap between two calls
// in a row, short against a client that has gone over to asynchronous calls.
constexpr std::chrono::milliseconds sync_calls_window{100};

// uv_backend_timeout's answer as a point in time (none: no timer, the poll may wait
// forever).
std::optional<std::chrono::steady_clock::time_point> deadline_after(int timeout_ms) {
  if (timeout_ms < 0) return std::nullopt;
  return std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
}

// Whether one of libuv's private queues has an element. Both layouts libuv has had
// (void*[2] up to 1.46, struct uv__queue since) begin with the pointer to the next
// element, which points back at the queue itself when it is empty.
template <typename Queue>
bool queue_filled(const Queue& queue) {
  return *reinterpret_cast<void* const*>(&queue) != static_cast<const void*>(&queue);
}

// Before the loop is watched from outside, what its next turn would do before it blocks
// is done now: libuv tells epoll about a watcher started in a callback only when its next
// poll begins (until then the loop's descriptor does not cover that socket), and prepare
// callbacks (the connections flush their writes there) run just before that poll. Turns
// of the loop while either waits, a few at most (a prepare handle that never stops would
// ask for a turn each time). Returns whether the loop is alive.
bool turn_due(uv_loop_t* loop) {
  return queue_filled(loop->watcher_queue) || queue_filled(loop->prepare_handles);
}

bool settle(uv_loop_t* loop) {
  bool alive = uv_loop_alive(loop) != 0;
  for (int turns = 0; alive && turns < 4 && turn_due(loop); ++turns) {
    alive = uv_run(loop, UV_RUN_NOWAIT) != 0;
  }
  return alive;
}

// How long the loop may be left to a poll from outside: 0 while a turn is still due.
int outside_timeout(uv_loop_t* loop) {
  return turn_due(loop) ? 0 : uv_backend_timeout(loop);
}

void wait_for(sem_t& semaphore) {
  while (::sem_wait(&semaphore) != 0) {
    // EINTR: a signal handler ran; the wake is still to come.
  }
}

}  // namespace

void LoopThread::run_background(Shared& shared) {
  uv_loop_t* loop = shared.own_loop.get();
  std::unique_lock lock(shared.lead_mutex);
  std::uint64_t turn_seen = 0;
  for (;;) {
    shared.background_parked = true;
    for (;;) {
      if (!shared.relayed.empty()) {
        run_relayed(shared, lock);
        continue;
      }
      if (shared.holder == Shared::Holder::caller) {
        if (shared.caller_turns != turn_seen) {
          // Timed: a caller whose turn is short gives the loop up without waking this
          // thread (unattended).
          turn_seen = shared.caller_turns;
          shared.lead_free.wait_for(lock, unattended_grace);
        } else {
          // The same turn outlasted the grace: checking every grace while it lasts would
          // cost a waiting call a thousand wakes a second. Its caller wakes this thread.
          shared.background_sleeps_through_turn = true;
          shared.lead_free.wait(lock);
          shared.background_sleeps_through_turn = false;
        }
      } else if (!shared.unattended || shared.background_called) {
        break;
      } else if (shared.lead_free.wait_until(lock, shared.unattended_until) ==
                     std::cv_status::timeout &&
                 shared.holder == Shared::Holder::none && shared.relayed.empty()) {
        // Relayed events go first (above): a caller that led meanwhile and waits for
        // them to be told woke this thread, and a timeout may have hidden that wake.
        break;
      }
    }
    shared.background_parked = false;
    shared.background_called = false;
    shared.unattended = false;
    if (!std::exchange(shared.deadline_handed_over, false)) {
      shared.holder = Shared::Holder::background;
      shared.loop_thread_id = std::this_thread::get_id();
      // Events a caller relayed before it gave the loop up come before any this thread
      // hears itself.
      run_relayed(shared, lock);
      auto deferred = std::exchange(shared.deferred, {});
      lock.unlock();
      for (auto& call : deferred) call();
      // What is ready now, without blocking: the blocking wait happens outside the loop,
      // where a caller can take the loop over without waking this thread.
      bool alive = uv_run(loop, UV_RUN_NOWAIT) != 0;
      lock.lock();
      // While synchronous callers wait, this thread runs the loop as a plain loop thread
      // until they are answered: a caller that comes meanwhile follows (it posts), and
      // nobody is handed the loop (a wake, and the loop idle until that thread runs). So
      // it does while no synchronous call came lately: the watch from outside costs each
      // wake a poll() and a turn without waiting, which a client used asynchronously
      // alone would pay for nothing. The first call after such a time follows.
      while (alive && (shared.first != nullptr || !sync_calls_lately(shared))) {
        lock.unlock();
        alive = uv_run(loop, UV_RUN_ONCE) != 0;
        lock.lock();
      }
      lock.unlock();
      alive = alive && settle(loop);
      const int timeout = outside_timeout(loop);
      lock.lock();
      shared.loop_thread_id = std::thread::id();
      if (!alive) {
        shared.holder = Shared::Holder::gone;
        run_relayed(shared, lock);
        return;
      }
      shared.background_deadline = deadline_after(timeout);
      shared.holder = Shared::Holder::none;
    }
    // Watch the loop's descriptor until something is ready, a timer is due, or a caller
    // that led leaves a timer due earlier (kick).
    const auto deadline = shared.background_deadline;
    int timeout = -1;
    if (deadline) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(
          *deadline - std::chrono::steady_clock::now());
      timeout = static_cast<int>(std::max<long long>(0, left.count()));
    }
    lock.unlock();
    pollfd watched[2] = {{uv_backend_fd(loop), POLLIN, 0}, {shared.kick, POLLIN, 0}};
    ::poll(watched, 2, timeout);
    if (watched[1].revents != 0) {
      eventfd_t ignored = 0;
      (void)::eventfd_read(shared.kick, &ignored);
    }
    lock.lock();
  }
}

LoopThread::Waited LoopThread::call(Waiter& waiter, std::function<void()> start,
                                    std::optional<std::chrono::steady_clock::time_point> until) {
  if (fork_guard_.forked()) return Waited::refused;
  // A bounded wait may leave before its answer: it never leads.
  if (shared_->callers_lead && !until) return lead(waiter, std::move(start));
  if (!post(std::move(start))) return Waited::refused;
  return wait(waiter, until);
}

LoopThread::Waited LoopThread::wait(Waiter& waiter,
                                    std::optional<std::chrono::steady_clock::time_point> until) {
  // The answer's wake needs no lock: finish() sets done_ before its sem_post.
  while (!waiter.done_.load(std::memory_order_acquire)) {
    if (!until) {
      wait_for(waiter.woken_);
      continue;
    }
    const auto since_epoch = until->time_since_epoch();
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
    timespec deadline{};
    deadline.tv_sec = static_cast<time_t>(seconds.count());
    deadline.tv_nsec = static_cast<long>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch - seconds).count());
    // steady_clock is CLOCK_MONOTONIC. EINTR: a signal handler ran; look again.
    if (::sem_clockwait(&waiter.woken_, CLOCK_MONOTONIC, &deadline) != 0 && errno == ETIMEDOUT) {
      return waiter.done_.load(std::memory_order_acquire) ? Waited::answered : Waited::abandoned;
    }
  }
  return Waited::answered;
}

LoopThread::Waited LoopThread::lead(Waiter& waiter, std::function<void()> start) {
  // A copy: a callback run while this thread leads may destroy this object.
  const auto shared = shared_;
  shared->last_sync_call.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                               std::memory_order_relaxed);
  std::unique_lock lock(shared->lead_mutex);
  if (shared->holder == Shared::Holder::gone) return Waited::refused;
  if (shared->holder == Shared::Holder::none) {
    {
      std::lock_guard tasks(shared->mutex);
      if (shared->stopping) return Waited::refused;
    }
    shared->holder = Shared::Holder::caller;
    ++shared->caller_turns;
    shared->unattended = false;
    lock.unlock();
    // noexcept: an exception thrown in the loop ends the process, as on the loop thread,
    // rather than leave the loop held by a caller that is gone.
    return [&]() noexcept {
      shared->loop_thread_id = std::this_thread::get_id();
      leading_caller_of_ = shared.get();
      shared->leading_waiter = &waiter;
      // Tasks posted before this call run before it, as they would through post().
      drain(&shared->wakeup);
      start();
      const bool answered = run_until_done(*shared, waiter);
      const bool yielded = answered && shared->yield_requested;
      // Still marked while it settles the loop: that may run callbacks too (and defer them).
      if (answered && !yielded) release(*shared);
      leading_caller_of_ = nullptr;
      if (!answered) return Waited::abandoned;
      if (yielded) follow_after_yield(*shared, waiter);
      await_relayed(*shared, waiter);
      return Waited::answered;
    }();
  }
  // Someone leads: follow. Queued before the start is posted, so that a follower takes
  // the leadership mutex once (the leader takes it for every answer).
  waiter.queued_ = true;
  waiter.previous_ = shared->last;
  (shared->last ? shared->last->next_ : shared->first) = &waiter;
  shared->last = &waiter;
  lock.unlock();
  if (!post(std::move(start))) {
    lock.lock();
    unlink(*shared, waiter);
    return Waited::refused;
  }
  return wait(waiter, std::nullopt);
}

void LoopThread::unlink(Shared& shared, Waiter& waiter) {
  (waiter.previous_ ? waiter.previous_->next_ : shared.first) = waiter.next_;
  (waiter.next_ ? waiter.next_->previous_ : shared.last) = waiter.previous_;
  waiter.queued_ = false;
}

void LoopThread::call_background(Shared& shared) {
  std::lock_guard lock(shared.lead_mutex);
  if (shared.holder != Shared::Holder::none || !shared.background_parked) return;
  shared.background_called = true;
  shared.lead_free.notify_one();
}

bool LoopThread::run_until_done(Shared& shared, Waiter& waiter) {
  // `done_` is written on this thread only while it leads (finish() runs in the loop).
  while (!waiter.done_ && !shared.yield_requested) {
    if (uv_run(shared.own_loop.get(), UV_RUN_ONCE) == 0 && !waiter.done_) {
      // Every handle closed without an answer: nothing will ever answer.
      std::lock_guard lock(shared.lead_mutex);
      give_up(shared);
      if (shared.background_parked) {
        shared.lead_free.notify_one();
      } else {
        (void)::eventfd_write(shared.kick, 1);
      }
      return false;
    }
  }
  return true;
}

bool LoopThread::sync_calls_lately(const Shared& shared) {
  const auto last = shared.last_sync_call.load(std::memory_order_relaxed);
  if (last == 0) return false;
  const auto since = std::chrono::steady_clock::now().time_since_epoch() -
                     std::chrono::steady_clock::duration(last);
  return since < sync_calls_window;
}

void LoopThread::give_up(Shared& shared) {
  // Everything a leading caller alone touches is reset before the next one may lead.
  shared.yield_requested = false;
  shared.leading_waiter = nullptr;
  shared.loop_thread_id = std::thread::id();
  shared.holder = Shared::Holder::none;
}

void LoopThread::follow_after_yield(Shared& shared, Waiter& waiter) {
  // Nothing is read from the loop here: the background thread takes it as it is and runs
  // the deferred calls first.
  std::unique_lock lock(shared.lead_mutex);
  give_up(shared);
  const bool answered = waiter.done_.load(std::memory_order_relaxed);
  if (!answered) {
    waiter.queued_ = true;
    waiter.previous_ = shared.last;
    (shared.last ? shared.last->next_ : shared.first) = &waiter;
    shared.last = &waiter;
  }
  if (shared.background_parked) {
    shared.background_called = true;
    shared.lead_free.notify_one();
  } else {
    (void)::eventfd_write(shared.kick, 1);
  }
  lock.unlock();
  if (answered) return;
  do {
    wait_for(waiter.woken_);
  } while (!waiter.done_.load(std::memory_order_acquire));
}

void LoopThread::release(Shared& shared) {
  // Read while this thread still leads: the loop's next deadline, and whether it has
  // anything left to watch (the shutdown may have closed its last handle here).
  const bool alive = settle(shared.own_loop.get());
  const auto deadline = deadline_after(outside_timeout(shared.own_loop.get()));
  std::unique_lock lock(shared.lead_mutex);
  give_up(shared);
  if (shared.first != nullptr || !shared.deferred.empty()) {
    // Followers wait, or application calls: the background thread serves them (followers
    // may also be served by a caller that comes first).
    if (shared.background_parked) {
      shared.background_called = true;
      shared.lead_free.notify_one();
    } else {
      (void)::eventfd_write(shared.kick, 1);
    }
    return;
  }
  if (!alive) {
    // The background thread must run the loop once more to see that it is finished.
    if (shared.background_parked) {
      shared.lead_free.notify_one();
    } else {
      (void)::eventfd_write(shared.kick, 1);
    }
    return;
  }
  if (shared.background_parked) {
    // It goes back to watching with this deadline, without taking the loop, once the
    // grace is over: a caller that comes back before then finds the loop free.
    shared.background_deadline = deadline;
    shared.deadline_handed_over = true;
    const auto grace_over = std::chrono::steady_clock::now() + unattended_grace;
    shared.unattended_until = deadline ? std::min(*deadline, grace_over) : grace_over;
    shared.unattended = true;
    bool tasks_waiting = false;
    {
      // A post that did not see `unattended` set is in the queue by now.
      std::lock_guard tasks(shared.mutex);
      tasks_waiting = !shared.tasks.empty();
    }
    if (tasks_waiting || (deadline && *deadline < grace_over)) {
      // Work is waiting, or a timer is due before this thread would look again.
      shared.background_called = true;
      shared.lead_free.notify_one();
    } else if (shared.background_sleeps_through_turn) {
      // It would not look again: a long turn pays one wake, for the unattended wait.
      shared.lead_free.notify_one();
    }
    return;
  }
  // The background thread polls with a deadline it read before this caller led: a timer
  // this caller left behind may be due earlier.
  if (deadline && (!shared.background_deadline || *deadline < *shared.background_deadline)) {
    shared.background_deadline = deadline;
    (void)::eventfd_write(shared.kick, 1);
  }
}

bool LoopThread::caller_leads() noexcept {
  return leading_caller_of_ != nullptr;
}

void LoopThread::defer_to_background(ApplicationCall call) {
  Shared& shared = *leading_caller_of_;
  {
    std::lock_guard lock(shared.lead_mutex);
    shared.deferred.push_back(std::move(call));
  }
  shared.yield_requested = true;
  uv_stop(shared.own_loop.get());
}

void LoopThread::relay_to_background(ApplicationCall call) {
  Shared& shared = *leading_caller_of_;
  std::lock_guard lock(shared.lead_mutex);
  shared.relayed.push_back(std::move(call));
  ++shared.relayed_count;
  if (shared.leading_waiter != nullptr) shared.leading_waiter->relayed_upto_ = shared.relayed_count;
  // The caller wakes the background thread as its call ends (await_relayed), once for
  // all it relayed. Only a turn the background thread sleeps through (a long wait for a
  // held key) wakes it now, once per batch, so that its events are not held back.
  if (shared.relayed.size() == 1 && shared.background_sleeps_through_turn) {
    shared.lead_free.notify_one();
  }
}

void LoopThread::run_relayed(Shared& shared, std::unique_lock<std::mutex>& lock) {
  while (!shared.relayed.empty()) {
    auto batch = std::exchange(shared.relayed, {});
    lock.unlock();
    for (auto& call : batch) call();
    lock.lock();
    shared.told_count += batch.size();
    shared.relayed_told.notify_all();
  }
}

void LoopThread::await_relayed(Shared& shared, const Waiter& waiter) {
  // Written by this thread alone, while it led.
  if (waiter.relayed_upto_ == 0) return;
  std::unique_lock lock(shared.lead_mutex);
  if (shared.told_count >= waiter.relayed_upto_) return;
  // The background thread may be waiting with a timeout, or watching the loop: either
  // would look later than this caller should wait.
  if (shared.background_parked) {
    shared.lead_free.notify_one();
  } else {
    (void)::eventfd_write(shared.kick, 1);
  }
  shared.relayed_told.wait(lock, [&] { return shared.told_count >= waiter.relayed_upto_; });
}

void LoopThread::finish(Waiter& waiter) {
  // The leading caller's own answer ends the loop's turn: one that came in a phase before
  // the turn's wait for I/O (a timer: a node's deadline, a retry; a next-turn task) would
  // otherwise leave the caller waiting in it until the loop's next event, which may
  // never come.
  if (leading_caller_of_ == shared_.get() && shared_->leading_waiter == &waiter) uv_stop(loop_);
  {
    std::lock_guard lock(shared_->lead_mutex);
    waiter.done_.store(true, std::memory_order_release);
    if (waiter.queued_) unlink(*shared_, waiter);
  }
  // The last touch: the waiter may return (and free it) once woken.
  ::sem_post(&waiter.woken_);
}

}  // namespace redlock::detail

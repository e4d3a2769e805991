#include "client/loop/leader_followers.hpp"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <uv.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace redlock::detail {

namespace {

// How long a caller that gives the loop up may leave it unwatched (unattended_): long
// enough for a thread that locks and unlocks in a row to come back.
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

}  // namespace

thread_local LeaderFollowers* LeaderFollowers::leading_caller_of_ = nullptr;

LeaderFollowers::LeaderFollowers(Loop loop) : loop_(std::move(loop)) {
  kick_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (kick_ < 0) {
    std::fprintf(stderr, "redlock: eventfd: %s\n", uv_strerror(uv_translate_sys_error(errno)));
    std::abort();
  }
}

LeaderFollowers::~LeaderFollowers() {
  ::close(kick_);
}

void LeaderFollowers::run_background() {
  uv_loop_t* loop = loop_.loop;
  std::unique_lock lock(mutex_);
  std::uint64_t turn_seen = 0;
  for (;;) {
    background_parked_ = true;
    for (;;) {
      if (!relayed_.empty()) {
        run_relayed(lock);
        continue;
      }
      if (holder_ == Holder::caller) {
        if (caller_turns_ != turn_seen) {
          // Timed: a caller whose turn is short gives the loop up without waking this
          // thread (unattended).
          turn_seen = caller_turns_;
          lead_free_.wait_for(lock, unattended_grace);
        } else {
          // The same turn outlasted the grace: checking every grace while it lasts would
          // cost a waiting call a thousand wakes a second. Its caller wakes this thread.
          background_sleeps_through_turn_ = true;
          lead_free_.wait(lock);
          background_sleeps_through_turn_ = false;
        }
      } else if (!unattended_ || background_called_) {
        break;
      } else if (lead_free_.wait_until(lock, unattended_until_) == std::cv_status::timeout &&
                 holder_ == Holder::none && relayed_.empty()) {
        // Relayed events go first (above): a caller that led meanwhile and waits for
        // them to be told woke this thread, and a timeout may have hidden that wake.
        break;
      }
    }
    background_parked_ = false;
    background_called_ = false;
    unattended_ = false;
    if (!std::exchange(deadline_handed_over_, false)) {
      holder_ = Holder::background;
      *loop_.loop_thread_id = std::this_thread::get_id();
      // Events a caller relayed before it gave the loop up come before any this thread
      // hears itself.
      run_relayed(lock);
      auto deferred = std::exchange(deferred_, {});
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
      while (alive && (first_ != nullptr || !sync_calls_lately())) {
        lock.unlock();
        alive = uv_run(loop, UV_RUN_ONCE) != 0;
        lock.lock();
      }
      lock.unlock();
      alive = alive && settle(loop);
      const int timeout = outside_timeout(loop);
      lock.lock();
      *loop_.loop_thread_id = std::thread::id();
      if (!alive) {
        holder_ = Holder::gone;
        run_relayed(lock);
        return;
      }
      background_deadline_ = deadline_after(timeout);
      holder_ = Holder::none;
    }
    // Watch the loop's descriptor until something is ready, a timer is due, or a caller
    // that led leaves a timer due earlier (kick).
    const auto deadline = background_deadline_;
    int timeout = -1;
    if (deadline) {
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(
          *deadline - std::chrono::steady_clock::now());
      timeout = static_cast<int>(std::max<long long>(0, left.count()));
    }
    lock.unlock();
    pollfd watched[2] = {{uv_backend_fd(loop), POLLIN, 0}, {kick_, POLLIN, 0}};
    ::poll(watched, 2, timeout);
    if (watched[1].revents != 0) {
      eventfd_t ignored = 0;
      (void)::eventfd_read(kick_, &ignored);
    }
    lock.lock();
  }
}

LeaderFollowers::Went LeaderFollowers::lead(SyncWaiter& waiter, std::function<void()>& start) {
  last_sync_call_.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                        std::memory_order_relaxed);
  std::unique_lock lock(mutex_);
  if (holder_ == Holder::gone) return Went::refused;
  if (holder_ != Holder::none) {
    // Someone leads: follow. Queued before the start is posted, so that a follower takes
    // the leadership mutex once (the leader takes it for every answer).
    link(waiter);
    return Went::follow;
  }
  if (!loop_.accepting()) return Went::refused;
  holder_ = Holder::caller;
  ++caller_turns_;
  unattended_ = false;
  lock.unlock();
  // noexcept: an exception thrown in the loop ends the process, as on the loop thread,
  // rather than leave the loop held by a caller that is gone.
  return [&]() noexcept {
    *loop_.loop_thread_id = std::this_thread::get_id();
    leading_caller_of_ = this;
    leading_waiter_ = &waiter;
    // Tasks posted before this call run before it, as they would through a post.
    loop_.drain(loop_.tasks);
    start();
    const bool answered = run_until_done(waiter);
    const bool yielded = answered && yield_requested_;
    // Still marked while it settles the loop: that may run callbacks too (and defer them).
    if (answered && !yielded) release();
    leading_caller_of_ = nullptr;
    if (!answered) return Went::abandoned;
    if (yielded) follow_after_yield(waiter);
    await_relayed(waiter);
    return Went::answered;
  }();
}

void LeaderFollowers::unfollow(SyncWaiter& waiter) {
  std::lock_guard lock(mutex_);
  unlink(waiter);
}

void LeaderFollowers::link(SyncWaiter& waiter) {
  waiter.queued_ = true;
  waiter.previous_ = last_;
  (last_ ? last_->next_ : first_) = &waiter;
  last_ = &waiter;
}

void LeaderFollowers::unlink(SyncWaiter& waiter) {
  (waiter.previous_ ? waiter.previous_->next_ : first_) = waiter.next_;
  (waiter.next_ ? waiter.next_->previous_ : last_) = waiter.previous_;
  waiter.queued_ = false;
}

void LeaderFollowers::posted() {
  if (!unattended_.load()) return;
  std::lock_guard lock(mutex_);
  if (holder_ != Holder::none || !background_parked_) return;
  background_called_ = true;
  lead_free_.notify_one();
}

void LeaderFollowers::wake_background() {
  if (background_parked_) {
    lead_free_.notify_one();
  } else {
    (void)::eventfd_write(kick_, 1);
  }
}

bool LeaderFollowers::run_until_done(SyncWaiter& waiter) {
  // `done_` is written on this thread only while it leads (finish() runs in the loop).
  while (!waiter.done_ && !yield_requested_) {
    if (uv_run(loop_.loop, UV_RUN_ONCE) == 0 && !waiter.done_) {
      // Every handle closed without an answer: nothing will ever answer.
      std::lock_guard lock(mutex_);
      give_up();
      wake_background();
      return false;
    }
  }
  return true;
}

bool LeaderFollowers::sync_calls_lately() const {
  const auto last = last_sync_call_.load(std::memory_order_relaxed);
  if (last == 0) return false;
  const auto since = std::chrono::steady_clock::now().time_since_epoch() -
                     std::chrono::steady_clock::duration(last);
  return since < sync_calls_window;
}

void LeaderFollowers::give_up() {
  // Everything a leading caller alone touches is reset before the next one may lead.
  yield_requested_ = false;
  leading_waiter_ = nullptr;
  *loop_.loop_thread_id = std::thread::id();
  holder_ = Holder::none;
}

void LeaderFollowers::follow_after_yield(SyncWaiter& waiter) {
  // Nothing is read from the loop here: the background thread takes it as it is and runs
  // the deferred calls first.
  std::unique_lock lock(mutex_);
  give_up();
  const bool answered = waiter.done_.load(std::memory_order_relaxed);
  if (!answered) link(waiter);
  if (background_parked_) background_called_ = true;
  wake_background();
  lock.unlock();
  if (answered) return;
  do {
    waiter.sleep();
  } while (!waiter.done_.load(std::memory_order_acquire));
}

void LeaderFollowers::release() {
  // Read while this thread still leads: the loop's next deadline, and whether it has
  // anything left to watch (the shutdown may have closed its last handle here).
  const bool alive = settle(loop_.loop);
  const auto deadline = deadline_after(outside_timeout(loop_.loop));
  std::unique_lock lock(mutex_);
  give_up();
  if (first_ != nullptr || !deferred_.empty()) {
    // Followers wait, or application calls: the background thread serves them (followers
    // may also be served by a caller that comes first).
    if (background_parked_) background_called_ = true;
    wake_background();
    return;
  }
  if (!alive) {
    // The background thread must run the loop once more to see that it is finished.
    wake_background();
    return;
  }
  if (background_parked_) {
    // It goes back to watching with this deadline, without taking the loop, once the
    // grace is over: a caller that comes back before then finds the loop free.
    background_deadline_ = deadline;
    deadline_handed_over_ = true;
    const auto grace_over = std::chrono::steady_clock::now() + unattended_grace;
    unattended_until_ = deadline ? std::min(*deadline, grace_over) : grace_over;
    unattended_ = true;
    // A post that did not see `unattended_` set is in the queue by now.
    if (loop_.tasks_waiting() || (deadline && *deadline < grace_over)) {
      // Work is waiting, or a timer is due before this thread would look again.
      background_called_ = true;
      lead_free_.notify_one();
    } else if (background_sleeps_through_turn_) {
      // It would not look again: a long turn pays one wake, for the unattended wait.
      lead_free_.notify_one();
    }
    return;
  }
  // The background thread polls with a deadline it read before this caller led: a timer
  // this caller left behind may be due earlier.
  if (deadline && (!background_deadline_ || *deadline < *background_deadline_)) {
    background_deadline_ = deadline;
    (void)::eventfd_write(kick_, 1);
  }
}

bool LeaderFollowers::caller_leads() noexcept {
  return leading_caller_of_ != nullptr;
}

void LeaderFollowers::defer_to_background(ApplicationCall call) {
  LeaderFollowers& self = *leading_caller_of_;
  {
    std::lock_guard lock(self.mutex_);
    self.deferred_.push_back(std::move(call));
  }
  self.yield_requested_ = true;
  uv_stop(self.loop_.loop);
}

void LeaderFollowers::relay_to_background(ApplicationCall call) {
  LeaderFollowers& self = *leading_caller_of_;
  std::lock_guard lock(self.mutex_);
  self.relayed_.push_back(std::move(call));
  ++self.relayed_count_;
  if (self.leading_waiter_ != nullptr) self.leading_waiter_->relayed_upto_ = self.relayed_count_;
  // The caller wakes the background thread as its call ends (await_relayed), once for
  // all it relayed. Only a turn the background thread sleeps through (a long wait for a
  // held key) wakes it now, once per batch, so that its events are not held back.
  if (self.relayed_.size() == 1 && self.background_sleeps_through_turn_) {
    self.lead_free_.notify_one();
  }
}

void LeaderFollowers::run_relayed(std::unique_lock<std::mutex>& lock) {
  while (!relayed_.empty()) {
    auto batch = std::exchange(relayed_, {});
    lock.unlock();
    for (auto& call : batch) call();
    lock.lock();
    told_count_ += batch.size();
    relayed_told_.notify_all();
  }
}

void LeaderFollowers::await_relayed(const SyncWaiter& waiter) {
  // Written by this thread alone, while it led.
  if (waiter.relayed_upto_ == 0) return;
  std::unique_lock lock(mutex_);
  if (told_count_ >= waiter.relayed_upto_) return;
  // The background thread may be waiting with a timeout, or watching the loop: either
  // would look later than this caller should wait.
  wake_background();
  relayed_told_.wait(lock, [&] { return told_count_ >= waiter.relayed_upto_; });
}

void LeaderFollowers::finish(SyncWaiter& waiter) {
  // The leading caller's own answer ends the loop's turn: one that came in a phase before
  // the turn's wait for I/O (a timer: a node's deadline, a retry; a next-turn task) would
  // otherwise leave the caller waiting in it until the loop's next event, which may
  // never come.
  if (leading_caller_of_ == this && leading_waiter_ == &waiter) uv_stop(loop_.loop);
  {
    std::lock_guard lock(mutex_);
    waiter.done_.store(true, std::memory_order_release);
    if (waiter.queued_) unlink(waiter);
  }
  // The last touch: the waiter may return (and free it) once woken.
  ::sem_post(&waiter.woken_);
}

}  // namespace redlock::detail

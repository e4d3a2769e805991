#include "client/loop/loop_thread.hpp"

#include <uv.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <utility>

#include "client/loop/leader_followers.hpp"

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
  std::unique_ptr<LeaderFollowers> leaders;
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
    if (callers_lead) {
      Shared* shared = shared_.get();
      shared_->leaders = std::make_unique<LeaderFollowers>(LeaderFollowers::Loop{
          .loop = loop_,
          .tasks = &shared_->wakeup,
          .drain = &LoopThread::drain,
          .accepting =
              [shared] {
                std::lock_guard lock(shared->mutex);
                return !shared->stopping;
              },
          .tasks_waiting =
              [shared] {
                std::lock_guard lock(shared->mutex);
                return !shared->tasks.empty();
              },
          .loop_thread_id = &shared_->loop_thread_id,
      });
    }
    thread_ = std::thread([shared = shared_] {
      if (shared->leaders) {
        shared->leaders->run_background();
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
  if (shared_->leaders) shared_->leaders->posted();
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
  if (shared_->leaders) shared_->leaders->posted();
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

LoopThread::Waited LoopThread::call(Waiter& waiter, std::function<void()> start,
                                    std::optional<std::chrono::steady_clock::time_point> until) {
  if (fork_guard_.forked()) return Waited::refused;
  // A bounded wait may leave before its answer: it never leads.
  if (shared_->leaders && !until) {
    // A copy: a callback run while this thread leads may destroy this object.
    const auto shared = shared_;
    switch (shared->leaders->lead(waiter, start)) {
      case LeaderFollowers::Went::answered:
        return Waited::answered;
      case LeaderFollowers::Went::abandoned:
        return Waited::abandoned;
      case LeaderFollowers::Went::refused:
        return Waited::refused;
      case LeaderFollowers::Went::follow:
        break;
    }
    if (!post(std::move(start))) {
      shared->leaders->unfollow(waiter);
      return Waited::refused;
    }
    return wait(waiter, std::nullopt);
  }
  if (!post(std::move(start))) return Waited::refused;
  return wait(waiter, until);
}

LoopThread::Waited LoopThread::wait(Waiter& waiter,
                                    std::optional<std::chrono::steady_clock::time_point> until) {
  // The answer's wake needs no lock: finish() sets done_ before its sem_post.
  while (!waiter.done_.load(std::memory_order_acquire)) {
    if (!until) {
      waiter.sleep();
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

void LoopThread::finish(Waiter& waiter) {
  if (shared_->leaders) return shared_->leaders->finish(waiter);
  waiter.done_.store(true, std::memory_order_release);
  // The last touch: the waiter may return (and free it) once woken.
  ::sem_post(&waiter.woken_);
}

}  // namespace redlock::detail

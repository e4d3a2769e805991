#include "client/loop/loop_thread.hpp"

#include <uv.h>

#include <cstdio>
#include <cstdlib>

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
};

namespace {

[[noreturn]] void fail(const char* what, int status) {
  std::fprintf(stderr, "redlock: %s: %s\n", what, uv_strerror(status));
  std::abort();
}

}  // namespace

LoopThread::LoopThread(uv_loop_s* external) : shared_(std::make_shared<Shared>()) {
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
    thread_ = std::thread([shared = shared_] {
      shared->loop_thread_id = std::this_thread::get_id();
      uv_run(shared->own_loop.get(), UV_RUN_DEFAULT);
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
  if (thread_.joinable()) {
    if (thread_.get_id() == std::this_thread::get_id()) {
      thread_.detach();
    } else {
      thread_.join();
    }
  }
}

bool LoopThread::post(std::function<void()> task) {
  std::lock_guard lock(shared_->mutex);
  if (shared_->stopping) return false;
  shared_->tasks.push_back(std::move(task));
  // Under the mutex: stop() cannot close the handle between the push and the send.
  uv_async_send(&shared_->wakeup);
  return true;
}

bool LoopThread::on_loop_thread() const noexcept {
  return shared_->loop_thread_id.load() == std::this_thread::get_id();
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
  if (!own_loop_ || on_loop_thread()) return;
  auto finished = shared_->finished_future;  // a copy per waiting thread
  finished.wait();
}

}  // namespace redlock::detail

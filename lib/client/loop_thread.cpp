#include "client/loop_thread.hpp"

#include <uv.h>

#include <cstdio>
#include <cstdlib>
#include <future>

namespace redlock::detail {

struct LoopThread::Shared {
  std::mutex mutex;
  std::vector<std::function<void()>> tasks;  // guarded by mutex
  bool stopping = false;                     // guarded by mutex
  uv_async_t wakeup{};
  std::atomic<std::thread::id> loop_thread_id{};
  std::unique_ptr<uv_loop_t> own_loop;
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
    if (int status = uv_loop_init(shared_->own_loop.get()); status < 0)
      fail("uv_loop_init", status);
    loop_ = shared_->own_loop.get();
    own_loop_ = true;
  } else {
    // The caller's loop thread is known once the loop runs our first task (drain);
    // the thread that constructs us need not be the one that runs the loop.
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
    });
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
  {
    std::lock_guard lock(shared_->mutex);
    if (shared_->stopping) return false;
    shared_->tasks.push_back(std::move(task));
  }
  uv_async_send(&shared_->wakeup);
  return true;
}

bool LoopThread::on_loop_thread() const noexcept {
  return shared_->loop_thread_id.load() == std::this_thread::get_id();
}

void LoopThread::drain(uv_async_s* handle) {
  auto* shared = static_cast<Shared*>(handle->data);
  shared->loop_thread_id = std::this_thread::get_id();
  std::vector<std::function<void()>> tasks;
  {
    std::lock_guard lock(shared->mutex);
    tasks.swap(shared->tasks);
  }
  for (auto& task : tasks) task();
}

void LoopThread::stop(std::function<void()> last) {
  auto finish = [shared = shared_, last = std::move(last)]() mutable {
    if (last) last();
    // Tasks that slipped in between the stop flag and this point still run: their
    // owners expect exactly one call.
    std::vector<std::function<void()>> rest;
    {
      std::lock_guard lock(shared->mutex);
      rest.swap(shared->tasks);
    }
    for (auto& task : rest) task();
    uv_close(reinterpret_cast<uv_handle_t*>(&shared->wakeup), [](uv_handle_t* handle) {
      auto* self = static_cast<Shared*>(handle->data);
      self->self_while_open.reset();  // may free *self
    });
  };

  bool first_stop = false;
  {
    std::lock_guard lock(shared_->mutex);
    if (!shared_->stopping) {
      shared_->stopping = true;
      first_stop = true;
    }
  }
  if (first_stop) {
    if (on_loop_thread()) {
      finish();
    } else {
      std::promise<void> done;
      auto done_future = done.get_future();
      {
        std::lock_guard lock(shared_->mutex);
        shared_->tasks.push_back([&finish, &done] {
          finish();
          done.set_value();
        });
      }
      uv_async_send(&shared_->wakeup);
      done_future.wait();
    }
  }
  if (own_loop_ && thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) {
    thread_.join();
  }
}

}  // namespace redlock::detail

#pragma once
// The synchronous API over the asynchronous one: start the operation and wait for its
// single callback: running the loop on the caller's thread when the client is idle
// (Options::sync_calls lead: LoopThread::lead), or posting it to the loop thread. Calling
// this on the loop thread would wait for itself, so it is refused there with an error;
// so is a call in a child process forked since the client was made (Engine::forked).

#include <semaphore.h>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include <redlock/result.hpp>

#include "client/engine/engine.hpp"
#include "client/operations/operations.hpp"

namespace redlock::detail {

template <typename T>
using Deliver = std::function<void(Result<T>)>;

inline Error loop_thread_error(std::string_view what) {
  return Error(make_error_code(errc::invalid_argument),
               std::string(what) +
                   ": a synchronous call on the client's loop thread (inside a callback) would "
                   "wait for itself; use the asynchronous form");
}

/// One synchronous call that waits as long as it takes, so it can live on the caller's
/// stack: the loop thread reaches it through a plain pointer, and the closures that carry
/// that pointer fit in std::function's own storage. No heap allocation, where a promise
/// took three (its shared state, and two closures too large to store in place).
///
/// The wake is a POSIX semaphore: sem_post's last touch of the semaphore is its wake-up
/// (glibc since 2.21), so the caller may return and free it as soon as sem_wait returns,
/// and the woken caller does not then contend for a mutex the loop thread still holds,
/// as a condition variable notified under its lock makes it do.
template <typename T, typename Start>
class StackSyncCall {
 public:
  explicit StackSyncCall(Start start) : start_(std::move(start)) { ::sem_init(&answered_, 0, 0); }
  ~StackSyncCall() { ::sem_destroy(&answered_); }
  StackSyncCall(const StackSyncCall&) = delete;
  StackSyncCall& operator=(const StackSyncCall&) = delete;

  /// Nullopt when the client no longer takes work (closing).
  std::optional<Result<T>> run(Engine& engine) {
    const bool posted = engine.post([this] {
      // Moved to the loop thread's stack first: an operation may deliver before `start`
      // returns, and from then on the caller may return and free this object.
      auto start = std::move(start_);
      start(Deliver<T>([this](Result<T> result) {
        result_.emplace(std::move(result));
        ::sem_post(&answered_);
      }));
    });
    if (!posted) return std::nullopt;
    while (::sem_wait(&answered_) != 0) {
      // EINTR: a signal handler ran; the answer is still to come.
    }
    return std::move(result_);
  }

 private:
  Start start_;
  sem_t answered_;
  std::optional<Result<T>> result_;
};

/// StackSyncCall through leader/followers (LoopThread::lead): the caller runs the loop
/// itself when nobody does, else it sleeps until its answer or its turn to lead.
template <typename T, typename Start>
class LedSyncCall {
 public:
  LedSyncCall(Engine& engine, Start start) : engine_(engine), start_(std::move(start)) {}
  LedSyncCall(const LedSyncCall&) = delete;
  LedSyncCall& operator=(const LedSyncCall&) = delete;

  /// Nullopt when the client no longer takes work (closing).
  std::optional<Result<T>> run() {
    const bool ran = engine_.loop_thread().lead(waiter_, [this] {
      // Moved to the leader's stack first, as in StackSyncCall.
      auto start = std::move(start_);
      start(Deliver<T>([this](Result<T> result) {
        result_.emplace(std::move(result));
        engine_.loop_thread().finish(waiter_);
      }));
    });
    if (!ran) return std::nullopt;
    return std::move(result_);
  }

 private:
  Engine& engine_;
  Start start_;
  LoopThread::Waiter waiter_;
  std::optional<Result<T>> result_;
};

/// Runs `start(deliver)` on the loop thread and returns what it delivers. With `limit`,
/// gives up waiting after it (the operation still completes on its own) and returns
/// nullopt.
template <typename T, typename Start>
std::optional<Result<T>> call_sync_for(Engine& engine, std::string_view what, Start start,
                                       std::optional<std::chrono::milliseconds> limit) {
  // In a forked child neither way below can work: the loop is the parent's (a caller
  // leading it would read the parent's replies) and its thread is not there.
  if (engine.forked()) return Result<T>(engine.fork_error(what));
  if (engine.on_loop_thread()) return Result<T>(loop_thread_error(what));
  // The observer and the log hear of a call's own steps while it runs, on the loop
  // thread: with either, a caller never leads. A bounded wait may leave before its answer,
  // and the caller's loop (Options::loop) is run by the caller alone (callers_lead() is
  // false for it).
  const auto& options = engine.options();
  if (!limit && engine.loop_thread().callers_lead() && !options.observer && !options.log) {
    LedSyncCall<T, Start> call(engine, std::move(start));
    auto result = call.run();
    if (!result) return Result<T>(cancelled_error(what));
    return result;
  }
  if (!limit) {
    StackSyncCall<T, Start> call(std::move(start));
    auto result = call.run(engine);
    if (!result) return Result<T>(cancelled_error(what));
    return result;
  }
  // A bounded wait may leave before the answer: the answer's storage is shared.
  auto promise = std::make_shared<std::promise<Result<T>>>();
  auto future = promise->get_future();
  const bool posted = engine.post([start = std::move(start), promise]() mutable {
    start(Deliver<T>([promise](Result<T> result) { promise->set_value(std::move(result)); }));
  });
  if (!posted) return Result<T>(cancelled_error(what));
  if (future.wait_for(*limit) != std::future_status::ready) return std::nullopt;
  return future.get();
}

template <typename T, typename Start>
Result<T> call_sync(Engine& engine, std::string_view what, Start start) {
  return std::move(*call_sync_for<T>(engine, what, std::move(start), std::nullopt));
}

}  // namespace redlock::detail

#pragma once
// The one way an asynchronous call reaches the loop: the edge rules (edges.hpp), then the
// operation started on the loop and its single answer handed to the application's
// callback there, through call_user (an exception it throws is caught and reported).
// Every *_async method of Client, Lock and Election goes through call_async, or through
// answer_at_once when there is no client to reach (a moved-from Lock).

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <utility>

#include <redlock/result.hpp>

#include "client/calls/edges.hpp"
#include "client/engine/engine.hpp"
#include "client/loop/user_callback.hpp"
#include "client/util/recycling_allocator.hpp"

namespace redlock::detail {

template <typename T>
using Callback = std::function<void(Result<T>)>;

/// How an asynchronous call is named, and what an empty callback makes of it.
struct AsyncCallName {
  /// Names the callback in the report of an exception it threw ("lock_async").
  const char* callback;
  /// Names the call in its errors ("lock \"k\"").
  CallName call;
  /// An acquisition: with an empty callback it does nothing (nobody would hold the
  /// lock). Any other call runs, and tells nobody.
  bool acquires = false;
};

/// Rule 2 (no client to reach): `result` at once, on the calling thread.
template <typename T>
void answer_at_once(const char* callback_name, Callback<T>& done, Result<T> result) {
  if (done) call_user_here(callback_name, done, std::move(result));
}

namespace async_call {

/// One asynchronous call, in one allocation: the callback, and the operation's start
/// until it runs. The task posted and the answer handed to the operation carry only its
/// address, which std::function stores in place. The answer frees it; it comes exactly
/// once, since an operation answers exactly once and a posted task always runs
/// (LoopThread::stop runs any left).
template <typename T>
class Pending {
 public:
  Pending(Engine& engine, const char* name, Callback<T> done)
      : engine_(engine), name_(name), done_(std::move(done)) {}
  virtual ~Pending() = default;
  Pending(const Pending&) = delete;
  Pending& operator=(const Pending&) = delete;

  void answer(Result<T> result) {
    // An answer inside a start made from the application's own call (on the loop
    // thread) waits for the loop's next turn: a callback never runs inside its call.
    if (starting_) return held_back_.emplace(std::move(result)), void();
    deliver(std::move(result));
  }

  /// On the loop thread (a task, or the start made at once there).
  virtual void begin() = 0;

  /// The start made at once, by a call on the loop thread.
  void begin_here() {
    starting_ = true;
    begin();
    // Still here: an answer that came during the start was held back, and anything else
    // answers on a later turn of this thread's loop.
    starting_ = false;
    if (held_back_) deliver_later();
  }

  /// The answer, on the loop's next turn (or at once when it no longer takes work:
  /// closing, and from then on no later turn is promised).
  void deliver_later() {
    if (!engine_.post([this] { deliver(std::move(*held_back_)); })) {
      deliver(std::move(*held_back_));
    }
  }

 private:
  void deliver(Result<T> result) {
    const std::unique_ptr<Pending> owned(this);
    if (owned->done_) call_user(owned->name_, owned->done_, std::move(result));
  }

  Engine& engine_;
  const char* name_;
  Callback<T> done_;
  bool starting_ = false;

 protected:
  std::optional<Result<T>> held_back_;
};

/// What the operation answers through: the call's address.
template <typename T>
class Answer {
 public:
  explicit Answer(Pending<T>* call) noexcept : call_(call) {}
  void operator()(Result<T> result) const { call_->answer(std::move(result)); }

 private:
  Pending<T>* call_;
};

template <typename T, typename Start>
class Call final : public Pending<T> {
 public:
  Call(Engine& engine, const char* name, Callback<T> done, Start start)
      : Pending<T>(engine, name, std::move(done)), start_(std::move(start)) {}

  // One per asynchronous call, made and freed on the loop thread by chains of calls
  // (each callback starting the next): its block is recycled there, not malloc'd per
  // cycle. `delete` through Pending finds these (its destructor is virtual).
  static void* operator new(std::size_t size) {
    return size == sizeof(Call) ? Blocks().allocate(1) : ::operator new(size);
  }
  static void operator delete(void* block, std::size_t size) noexcept {
    if (size == sizeof(Call)) return Blocks().deallocate(static_cast<Call*>(block), 1);
    ::operator delete(block);
  }

  void begin() override {
    // Moved to the stack first: the operation may answer (and free this) before `start`
    // returns.
    auto start = std::move(start_);
    start(Answer<T>(this));
  }

  /// Bad arguments: answered as if the operation had, on the loop.
  void refuse(Error problem) { this->held_back_.emplace(std::move(problem)); }

 private:
  using Blocks = RecyclingAllocator<Call>;
  Start start_;
};

}  // namespace async_call

/// Applies the edge rules, then runs `start(answer)` on the loop (`answer` takes a
/// Result<T>, once) and hands the answer to `done` on the loop thread, never inside this
/// call. `problem` (bad arguments) is the answer instead, also on the loop thread.
template <typename T, typename Start>
void call_async(Engine& engine, const AsyncCallName& name, std::optional<Error> problem,
                Start start, Callback<T> done) {
  if (!done && name.acquires) return;
  if (auto refused = async_refusal(engine, name.call)) {
    return answer_at_once<T>(name.callback, done, std::move(*refused));
  }
  auto* call =
      new async_call::Call<T, Start>(engine, name.callback, std::move(done), std::move(start));
  if (problem) {
    call->refuse(std::move(*problem));
    return call->deliver_later();
  }
  // On the loop thread (a callback chaining its next operation) the start is made at
  // once: its commands go out with this turn's.
  if (engine.on_loop_thread()) return call->begin_here();
  if (!engine.post([call] { call->begin(); })) {
    // Closed meanwhile, by another thread: as after close().
    call->refuse(cancelled_error(name.call.text()));
    call->deliver_later();
  }
}

}  // namespace redlock::detail

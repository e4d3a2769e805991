#pragma once
// The one way a synchronous call reaches the loop: the edge rules (edges.hpp), then the
// operation started on the loop and its single answer waited for. How the caller waits is
// the loop's (LoopThread::call): with leader/followers a caller that finds the client idle
// runs the loop itself until its answer came, else it sleeps until the loop thread
// answers. A wait may be bounded (a Lock's destructor): the caller then leaves at the
// bound and the operation completes on its own.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <optional>
#include <utility>

#include <redlock/result.hpp>

#include "client/calls/edges.hpp"
#include "client/engine/engine.hpp"
#include "client/util/recycling_allocator.hpp"

namespace redlock::detail {

template <typename T>
using Deliver = std::function<void(Result<T>)>;

namespace sync_call {

/// One synchronous call: the operation's start, the caller's wait and the answer, in one
/// allocation shared by the caller and the answer (each drops it once), so that a caller
/// whose wait is bounded may leave first. The task posted and the answer handed to the
/// operation carry only its address, which std::function stores in place.
template <typename T, typename Start>
class Call {
 public:
  Call(LoopThread& loop, Start start) : loop_(loop), start_(std::move(start)) {}

  // One per synchronous call, mostly freed by the thread that made it (the caller drops
  // its share last, or led the loop that answered): its block is recycled there, not
  // malloc'd per call.
  static void* operator new(std::size_t size) {
    return size == sizeof(Call) ? Blocks().allocate(1) : ::operator new(size);
  }
  static void operator delete(void* block, std::size_t size) noexcept {
    if (size == sizeof(Call)) return Blocks().deallocate(static_cast<Call*>(block), 1);
    ::operator delete(block);
  }

  std::optional<Result<T>> run(std::optional<std::chrono::milliseconds> limit) {
    std::optional<std::chrono::steady_clock::time_point> until;
    if (limit) until = std::chrono::steady_clock::now() + *limit;
    const auto waited = loop_.call(
        waiter_, [this] { begin(); }, until);
    std::optional<Result<T>> result;
    if (waited == LoopThread::Waited::answered) result = std::move(result_);
    // Refused: the start never ran and never will, so the answer's share goes too. A
    // caller that left (abandoned) leaves that share to the answer.
    if (waited == LoopThread::Waited::refused) drop();
    drop();
    return result;
  }

 private:
  void begin() {
    // Moved to the loop thread's stack first: an operation may answer before `start`
    // returns, and a caller that left may then have freed this object.
    auto start = std::move(start_);
    start(Deliver<T>([this](Result<T> result) {
      result_.emplace(std::move(result));
      loop_.finish(waiter_);
      drop();
    }));
  }
  void drop() {
    if (owners_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  using Blocks = RecyclingAllocator<Call>;

  LoopThread& loop_;
  Start start_;
  LoopThread::Waiter waiter_;
  std::optional<Result<T>> result_;
  std::atomic<int> owners_{2};  // the caller and the answer
};

}  // namespace sync_call

/// Runs `start(deliver)` on `loop` and waits for what it delivers, at most `limit`:
/// nullopt when the loop took no more work, or the wait ended first. No edge rule: the
/// callers below apply them (and FencedStore its own).
template <typename T, typename Start>
std::optional<Result<T>> wait_for_answer(LoopThread& loop, Start start,
                                         std::optional<std::chrono::milliseconds> limit) {
  return (new sync_call::Call<T, Start>(loop, std::move(start)))->run(limit);
}

/// Applies the edge rules, then runs `start(deliver)` on the loop and returns what it
/// delivers. With `limit`, gives up waiting after it (the operation still completes on
/// its own) and returns nullopt.
template <typename T, typename Start>
std::optional<Result<T>> call_sync_for(Engine& engine, const CallName& name, Start start,
                                       std::optional<std::chrono::milliseconds> limit) {
  if (auto refused = sync_refusal(engine, name)) return Result<T>(std::move(*refused));
  auto result = wait_for_answer<T>(engine.loop_thread(), std::move(start), limit);
  if (!result && !limit) return Result<T>(cancelled_error(name.text()));
  return result;
}

template <typename T, typename Start>
Result<T> call_sync(Engine& engine, const CallName& name, Start start) {
  return std::move(*call_sync_for<T>(engine, name, std::move(start), std::nullopt));
}

/// call_sync of an operation named `what` alone.
template <typename T, typename Start>
Result<T> call_sync(Engine& engine, std::string_view what, Start start) {
  return call_sync<T>(engine, CallName{what}, std::move(start));
}

/// call_sync with the arguments' check: `problem` (bad arguments) is the answer instead,
/// after the edge rules (calls/edges.hpp).
template <typename T, typename Start>
Result<T> call_sync(Engine& engine, const CallName& name, std::optional<Error> problem,
                    Start start) {
  if (!problem) return call_sync<T>(engine, name, std::move(start));
  if (auto refused = sync_refusal(engine, name)) return std::move(*refused);
  return std::move(*problem);
}

}  // namespace redlock::detail

#pragma once
// The synchronous API over the asynchronous one: post the operation to the loop thread
// and wait for its single callback. Calling this on the loop thread would wait for
// itself, so it is refused there with an error instead.

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include <redlock/result.hpp>

#include "client/engine.hpp"
#include "client/operations.hpp"

namespace redlock::detail {

template <typename T>
using Deliver = std::function<void(Result<T>)>;

inline Error loop_thread_error(std::string_view what) {
  return Error(make_error_code(errc::invalid_argument),
               std::string(what) +
                   ": a synchronous call on the client's loop thread (inside a callback) would "
                   "wait for itself; use the asynchronous form");
}

/// Runs `start(deliver)` on the loop thread and returns what it delivers. With `limit`,
/// gives up waiting after it (the operation still completes on its own) and returns
/// nullopt.
template <typename T, typename Start>
std::optional<Result<T>> call_sync_for(Engine& engine, std::string_view what, Start start,
                                       std::optional<std::chrono::milliseconds> limit) {
  if (engine.on_loop_thread()) return Result<T>(loop_thread_error(what));
  auto promise = std::make_shared<std::promise<Result<T>>>();
  auto future = promise->get_future();
  const bool posted = engine.post([start = std::move(start), promise]() mutable {
    start(Deliver<T>([promise](Result<T> result) { promise->set_value(std::move(result)); }));
  });
  if (!posted) return Result<T>(cancelled_error(what));
  if (limit && future.wait_for(*limit) != std::future_status::ready) return std::nullopt;
  return future.get();
}

template <typename T, typename Start>
Result<T> call_sync(Engine& engine, std::string_view what, Start start) {
  return std::move(*call_sync_for<T>(engine, what, std::move(start), std::nullopt));
}

}  // namespace redlock::detail

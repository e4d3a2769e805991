#pragma once
// The asynchronous public methods over the loop thread: post the operation and hand its
// single result to the caller's callback, or report why it never started.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <redlock/result.hpp>

#include "client/engine/engine.hpp"
#include "client/loop/user_callback.hpp"
#include "client/operations/operations.hpp"

namespace redlock::detail {

/// Runs `start(deliver)` on the loop thread; `done` gets what it delivers. When `problem`
/// is set (bad arguments) nothing starts and `done` gets it on the loop thread; when the
/// engine is closed, `done` gets errc::cancelled (`what`: "the client closed") at once on
/// the calling thread, and in a forked child the fork error, also at once. Either way
/// `done` runs exactly once, through call_user (`name`).
template <typename T, typename Start>
void call_async(Engine& engine, const char* name, std::string_view what,
                std::optional<Error> problem, Start start, std::function<void(Result<T>)> done) {
  if (engine.forked()) return call_user_here(name, done, Result<T>(engine.fork_error(what)));
  auto shared_done = std::make_shared<std::function<void(Result<T>)>>(std::move(done));
  auto deliver = [name, shared_done](Result<T> result) {
    call_user(name, *shared_done, std::move(result));
  };
  const bool posted =
      engine.post([start = std::move(start), problem = std::move(problem), deliver]() mutable {
        if (problem) return deliver(std::move(*problem));
        start(deliver);
      });
  if (!posted) deliver(cancelled_error(what));
}

}  // namespace redlock::detail

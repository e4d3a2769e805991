#pragma once
// How every acquisition reaches the loop and its result reaches the caller: one path for
// lock, try_lock, read_lock, write_lock, acquire_permit and lock_all, sync and async. The
// async contract (client.hpp) is written once here: an empty callback acquires nothing,
// the callback runs exactly once on the loop thread, and an exception it throws is caught
// and reported (the Lock it was handed is released).

#include <memory>
#include <string_view>
#include <utility>

#include <redlock/client.hpp>
#include <redlock/options.hpp>
#include <redlock/result.hpp>

#include "client/kinds/kind.hpp"

namespace redlock::detail {

/// Where a held lock becomes the user's Lock: its constructor is the library's alone.
struct LockMaker {
  static Lock make(std::shared_ptr<LockState> state) noexcept { return Lock(std::move(state)); }
};

class Engine;

/// The options every kind checks the same way (the client's node_timeout and drift),
/// with `what` ("lock", "read_lock"...) starting the message.
std::optional<Error> check_acquire_options(const Engine& engine, std::string_view what,
                                           const LockOptions& options);

/// Acquires `kind` (or reports why it was refused) and waits for the result.
Result<Lock> acquire_sync(const std::shared_ptr<Engine>& engine, std::string_view what,
                          Result<Kind> kind, LockOptions options);

/// Acquires `kind` (or reports why it was refused) and calls `callback` on the loop thread.
/// `key` names the lock if the client has closed before the operation could start.
void acquire_async(const std::shared_ptr<Engine>& engine, std::string_view what,
                   std::string_view key, Result<Kind> kind, LockOptions options,
                   Client::LockCallback callback);

}  // namespace redlock::detail

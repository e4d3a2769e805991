#pragma once
// How every acquisition reaches the loop and its result reaches the caller: one path for
// lock, try_lock, read_lock, write_lock, acquire_permit and lock_all, sync and async. The
// async contract (client.hpp) is written once here: an empty callback acquires nothing,
// the callback runs exactly once on the loop thread, and an exception it throws is caught
// and reported (the Lock it was handed is released).

#include <string_view>

#include <redlock/client.hpp>
#include <redlock/options.hpp>
#include <redlock/result.hpp>

#include "client/kinds/kind.hpp"

namespace redlock::detail {

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

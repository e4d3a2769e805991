#pragma once
// Every acquisition (lock, try_lock, read_lock, write_lock, acquire_permit, lock_all),
// sync and async, over the one synchronous and the one asynchronous call (sync_call.hpp,
// async_call.hpp): the held lock becomes the user's Lock here.

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

/// Acquires `kind` (or reports why it was refused) and waits for the result. `what` and
/// `key` name the call in the errors of the edge rules (calls/edges.hpp).
Result<Lock> acquire_sync(const std::shared_ptr<Engine>& engine, std::string_view what,
                          std::string_view key, Result<Kind> kind, LockOptions options);

/// Acquires `kind` (or reports why it was refused) and calls `callback` on the loop thread,
/// by the edge rules (calls/edges.hpp); an empty callback acquires nothing.
void acquire_async(const std::shared_ptr<Engine>& engine, std::string_view what,
                   std::string_view key, Result<Kind> kind, LockOptions options,
                   Client::LockCallback callback);

}  // namespace redlock::detail

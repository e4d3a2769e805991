#include "client/calls/acquire_call.hpp"

#include "client/calls/async_call.hpp"
#include "client/calls/sync_call.hpp"
#include "client/engine/engine.hpp"
#include "client/kinds/lock_state.hpp"
#include "client/loop/user_callback.hpp"
#include "client/operations/acquire.hpp"
#include "core/validation.hpp"

namespace redlock::detail {

namespace {

// The names of the async forms, for the report of a callback that threw.
const char* async_name(std::string_view what) {
  if (what == "read_lock") return "read_lock_async";
  if (what == "write_lock") return "write_lock_async";
  if (what == "acquire_permit") return "acquire_permit_async";
  if (what == "lock_all") return "lock_all_async";
  return "lock_async";
}

std::optional<Error> refusal_of(Result<Kind>& kind) {
  if (kind) return std::nullopt;
  return std::move(kind).error();
}

}  // namespace

std::optional<Error> check_acquire_options(const Engine& engine, std::string_view what,
                                           const LockOptions& options) {
  auto problem = core::check_lock_options(options, engine.options().node_timeout, engine.drift());
  if (!problem) problem = engine.check_guard_bound(options.ttl);
  if (!problem) return std::nullopt;
  return Error(make_error_code(errc::invalid_argument), std::string(what) + ": " + *problem);
}

Result<Lock> acquire_sync(const std::shared_ptr<Engine>& engine, std::string_view what,
                          std::string_view key, Result<Kind> kind, LockOptions options) {
  auto problem = refusal_of(kind);
  auto acquired = call_sync<std::shared_ptr<LockState>>(
      *engine, CallName{what, key}, std::move(problem),
      [engine, kind = std::move(kind), options = std::move(options)](auto done) mutable {
        start_acquire(engine, std::move(*kind), std::move(options), std::move(done));
      });
  if (!acquired) return std::move(acquired).error();
  return LockMaker::make(std::move(*acquired));
}

void acquire_async(const std::shared_ptr<Engine>& engine, std::string_view what,
                   std::string_view key, Result<Kind> kind, LockOptions options,
                   Client::LockCallback callback) {
  auto problem = refusal_of(kind);
  call_async<Lock>(
      *engine, AsyncCallName{async_name(what), CallName{what, key}, true}, std::move(problem),
      [engine, kind = std::move(kind), options = std::move(options)](auto answer) mutable {
        start_acquire(engine, std::move(*kind), std::move(options),
                      [answer](Result<std::shared_ptr<LockState>> acquired) {
                        if (!acquired) return answer(std::move(acquired).error());
                        // A callback that throws has dropped the Lock by then, which
                        // releases it.
                        answer(LockMaker::make(std::move(*acquired)));
                      });
      },
      std::move(callback));
}

}  // namespace redlock::detail

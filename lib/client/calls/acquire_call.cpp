#include "client/calls/acquire_call.hpp"

#include "client/calls/sync_call.hpp"
#include "client/engine/engine.hpp"
#include "client/kinds/lock_state.hpp"
#include "client/loop/user_callback.hpp"
#include "client/operations/acquire.hpp"
#include "core/validation.hpp"

namespace redlock::detail {

namespace {

// An acquisition's async call in one allocation: the task posted to the loop and the
// delivery handed to the operation carry only its address, which std::function stores in
// place. The delivery frees it; it runs exactly once, since an operation delivers exactly
// once and a posted task always runs (LoopThread::stop runs any left).
struct AsyncRequest {
  std::shared_ptr<Engine> engine;
  Result<Kind> kind;
  LockOptions options;
  Client::LockCallback callback;
  const char* what;
};

void deliver(AsyncRequest* request, Result<std::shared_ptr<LockState>> acquired) {
  const std::unique_ptr<AsyncRequest> owned(request);
  if (!acquired) return call_user(owned->what, owned->callback, std::move(acquired).error());
  // A callback that throws has dropped the Lock by then, which releases it.
  call_user(owned->what, owned->callback, LockMaker::make(std::move(*acquired)));
}

// The names of the async forms, for the report of a callback that threw.
const char* async_name(std::string_view what) {
  if (what == "read_lock") return "read_lock_async";
  if (what == "write_lock") return "write_lock_async";
  if (what == "acquire_permit") return "acquire_permit_async";
  if (what == "lock_all") return "lock_all_async";
  return "lock_async";
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
                          Result<Kind> kind, LockOptions options) {
  if (!kind) return std::move(kind).error();
  if (engine->forked()) return engine->fork_error(kind->describe());
  auto acquired = call_sync<std::shared_ptr<LockState>>(
      *engine, what,
      [engine, kind = std::move(*kind), options = std::move(options)](auto done) mutable {
        start_acquire(engine, std::move(kind), std::move(options), std::move(done));
      });
  if (!acquired) return std::move(acquired).error();
  return LockMaker::make(std::move(*acquired));
}

void acquire_async(const std::shared_ptr<Engine>& engine, std::string_view what,
                   std::string_view key, Result<Kind> kind, LockOptions options,
                   Client::LockCallback callback) {
  // Nothing to report to: nothing is acquired (documented in the header).
  if (!callback) return;
  if (engine->forked()) {
    // As after close(): at once, on the calling thread (there is no loop thread here).
    auto error =
        engine->fork_error(kind ? kind->describe() : std::string(what) + " " + quote_key(key));
    return call_user_here(async_name(what), callback, Result<Lock>(std::move(error)));
  }
  const bool refused = !kind;
  auto* request = new AsyncRequest{engine, std::move(kind), std::move(options), std::move(callback),
                                   async_name(what)};
  auto done = [request](Result<std::shared_ptr<LockState>> acquired) {
    deliver(request, std::move(acquired));
  };
  auto start = [request, done] {
    if (!request->kind) return deliver(request, std::move(request->kind).error());
    // Nothing of `request` is used after this call: it may have delivered (and freed it)
    // before returning.
    const auto owner = request->engine;
    start_acquire(owner, std::move(*request->kind), std::move(request->options), done);
  };
  // On the loop thread (a callback chaining its next acquisition) the acquire starts
  // here: its commands go out with this turn's. Its callback still never runs inside this
  // call: a node answers on a later turn even when it fails at once. A refusal is
  // delivered from the loop, like every other answer.
  if (!refused && engine->on_loop_thread() && engine->accepting() &&
      !request->options.stop.stop_requested()) {
    return start();
  }
  if (!engine->post(std::move(start))) {
    deliver(request, cancelled_error(std::string(what) + " " + quote_key(key)));
  }
}

}  // namespace redlock::detail

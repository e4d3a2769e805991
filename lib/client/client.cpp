#include <redlock/client.hpp>

#include "client/client_access.hpp"
#include "client/engine.hpp"
#include "client/operations.hpp"
#include "client/sync_call.hpp"
#include "client/user_callback.hpp"
#include "core/validation.hpp"

namespace redlock {

using std::chrono::milliseconds;

namespace {

Error invalid(std::string_view what, const std::string& problem) {
  return Error(make_error_code(errc::invalid_argument), std::string(what) + ": " + problem);
}

// A lock_async() in one allocation: the task posted to the loop and the delivery handed
// to the acquire carry only its address, which std::function stores in place (closures
// that captured the key, options and a shared callback took three more). The delivery
// frees it; it runs exactly once, since an operation delivers exactly once and a posted
// task always runs (LoopThread::stop runs any left).
struct LockAsyncRequest {
  std::shared_ptr<detail::Engine> engine;
  std::string key;
  LockOptions options;
  std::optional<Error> problem;
  Client::LockCallback callback;
};

void deliver_lock(LockAsyncRequest* request, Result<std::shared_ptr<detail::LockState>> acquired) {
  const std::unique_ptr<LockAsyncRequest> owned(request);
  if (!acquired)
    return detail::call_user("lock_async", owned->callback, std::move(acquired).error());
  // A callback that throws has dropped the Lock by then, which releases it.
  detail::call_user("lock_async", owned->callback, Lock(std::move(*acquired)));
}

}  // namespace

std::shared_ptr<Client> Client::create(Options options) {
  return detail::ClientAccess::make(detail::Engine::create(std::move(options)));
}

Client::Client(std::shared_ptr<detail::Engine> engine) : engine_(std::move(engine)) {}

Client::~Client() {
  close();
}

void Client::close() {
  engine_->close();
}

int Client::quorum() const noexcept {
  return engine_->quorum();
}

const std::vector<std::string>& Client::nodes() const noexcept {
  return engine_->node_names();
}

Result<Lock> Client::try_lock(std::string_view key, milliseconds ttl) {
  LockOptions options;
  options.ttl = ttl;
  return lock(key, options);
}

Result<Lock> Client::lock(std::string_view key, const LockOptions& options) {
  if (auto problem = core::check_key(key, engine_->options().max_key_bytes))
    return invalid("lock", *problem);
  if (auto problem =
          core::check_lock_options(options, engine_->options().node_timeout, engine_->drift())) {
    return invalid("lock", *problem);
  }
  auto acquired = detail::call_sync<std::shared_ptr<detail::LockState>>(
      *engine_, "lock", [engine = engine_, key = std::string(key), options](auto deliver) mutable {
        detail::start_acquire(engine, std::move(key), std::move(options), std::move(deliver));
      });
  if (!acquired) return std::move(acquired).error();
  return Lock(std::move(*acquired));
}

void Client::lock_async(std::string_view key, LockOptions options, LockCallback callback) {
  // Nothing to report to: nothing is acquired (documented in the header).
  if (!callback) return;
  std::optional<Error> problem;
  if (auto text = core::check_key(key, engine_->options().max_key_bytes)) {
    problem = invalid("lock", *text);
  } else if (auto text = core::check_lock_options(options, engine_->options().node_timeout,
                                                  engine_->drift())) {
    problem = invalid("lock", *text);
  }
  auto* request = new LockAsyncRequest{engine_, std::string(key), std::move(options),
                                       std::move(problem), std::move(callback)};
  auto deliver = [request](Result<std::shared_ptr<detail::LockState>> acquired) {
    deliver_lock(request, std::move(acquired));
  };
  auto start = [request, deliver] {
    if (request->problem) return deliver_lock(request, std::move(*request->problem));
    // Nothing of `request` is used after this call: it may have delivered (and freed it)
    // before returning.
    const auto engine = request->engine;
    detail::start_acquire(engine, std::move(request->key), std::move(request->options), deliver);
  };
  // On the loop thread (a callback chaining its next acquisition) the acquire starts
  // here: its commands go out with this turn's, not one turn of the loop later. Its
  // callback still never runs inside this call, so a callback that retries at once does
  // not nest: a node answers on a later turn even when it fails at once (a connection
  // defers its failures, a closed node answers on the next turn). A problem found above
  // is delivered from the loop, like every other answer.
  if (!request->problem && engine_->on_loop_thread() && engine_->accepting()) return start();
  const bool posted = engine_->post(std::move(start));
  if (!posted) deliver_lock(request, detail::cancelled_error("lock " + detail::quote_key(key)));
}

Result<std::vector<NodeOutcome>> Client::status(std::string_view key) {
  if (auto problem = core::check_key(key, engine_->options().max_key_bytes))
    return invalid("status", *problem);
  return detail::call_sync<std::vector<NodeOutcome>>(
      *engine_, "status",
      [engine = engine_, key = std::string(key),
       timeout = detail::diagnostic_timeout(*engine_)](auto deliver) mutable {
        detail::start_status(engine, std::move(key), timeout, std::move(deliver));
      });
}

Result<void> Client::release(std::string_view key, std::string_view value) {
  if (auto problem = core::check_key(key, engine_->options().max_key_bytes))
    return invalid("release", *problem);
  if (value.empty()) return invalid("release", "value: must not be empty");
  auto released = detail::call_sync<detail::Released>(
      *engine_, "release",
      [engine = engine_, key = std::string(key), value = std::string(value),
       timeout = detail::diagnostic_timeout(*engine_)](auto deliver) mutable {
        detail::start_release(engine, std::move(key), std::move(value), timeout,
                              std::move(deliver));
      });
  if (!released) return std::move(released).error();
  if (released->deleted == 0) {
    return Error(make_error_code(errc::not_held),
                 "release " + detail::quote_key(key) + ": no node that answered held this value",
                 std::move(released->outcomes));
  }
  return {};
}

Result<milliseconds> Client::extend(std::string_view key, std::string_view value,
                                    milliseconds ttl) {
  if (auto problem = core::check_key(key, engine_->options().max_key_bytes))
    return invalid("extend", *problem);
  if (value.empty()) return invalid("extend", "value: must not be empty");
  if (auto problem = core::check_ttl(ttl, engine_->options().node_timeout))
    return invalid("extend", *problem);
  auto extended = detail::call_sync<core::Clock::time_point>(
      *engine_, "extend",
      [engine = engine_, key = std::string(key), value = std::string(value),
       ttl](auto deliver) mutable {
        detail::start_extend(engine, std::move(key), std::move(value), ttl, std::move(deliver));
      });
  if (!extended) return std::move(extended).error();
  return core::validity_left(*extended, core::Clock::now());
}

}  // namespace redlock

// Client's methods, each synchronous form beside its asynchronous one: the arguments'
// checks, then the hop to the loop (calls/). Every acquisition goes through
// calls/acquire_call.hpp with the kind its arguments make (api/kind_requests.hpp).

#include <redlock/client.hpp>

#include "client/api/client_access.hpp"
#include "client/api/kind_requests.hpp"
#include "client/calls/acquire_call.hpp"
#include "client/calls/async_call.hpp"
#include "client/calls/sync_call.hpp"
#include "client/engine/engine.hpp"
#include "client/loop/fork_guard.hpp"
#include "client/operations/inspect.hpp"
#include "client/operations/operations.hpp"
#include "core/validation.hpp"

namespace redlock {

using std::chrono::milliseconds;

namespace {

Error invalid(std::string_view what, const std::string& problem) {
  return Error(make_error_code(errc::invalid_argument), std::string(what) + ": " + problem);
}

std::optional<Error> invalid_if(std::string_view what, std::optional<std::string> problem) {
  if (!problem) return std::nullopt;
  return invalid(what, *problem);
}

std::string quoted(std::string_view what, std::string_view key) {
  return std::string(what) + " " + detail::quote_key(key);
}

}  // namespace

std::shared_ptr<Client> Client::create(Options options) {
  return detail::ClientAccess::make(detail::Engine::create(std::move(options)));
}

Client::Client(std::shared_ptr<detail::Engine> engine) : engine_(std::move(engine)) {}

Client::~Client() {
  // In a forked child the engine's loop, thread and connections are the parent's: it is
  // left behind, never closed (closing would act on the parent's descriptors).
  if (engine_->forked()) {
    detail::ForkGuard::leak(std::move(engine_));
    return;
  }
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

void Client::try_lock_async(std::string_view key, milliseconds ttl, LockCallback callback) {
  LockOptions options;
  options.ttl = ttl;
  lock_async(key, std::move(options), std::move(callback));
}

Result<Lock> Client::lock(std::string_view key, const LockOptions& options) {
  return detail::acquire_sync(engine_, "lock", detail::exclusive_of(*engine_, key, options),
                              options);
}

void Client::lock_async(std::string_view key, LockOptions options, LockCallback callback) {
  auto kind = detail::exclusive_of(*engine_, key, options);
  detail::acquire_async(engine_, "lock", key, std::move(kind), std::move(options),
                        std::move(callback));
}

Result<Lock> Client::acquire_permit(std::string_view key, const SemaphoreOptions& options) {
  return detail::acquire_sync(engine_, "acquire_permit", detail::permit_of(*engine_, key, options),
                              options.lock);
}

void Client::acquire_permit_async(std::string_view key, SemaphoreOptions options,
                                  LockCallback callback) {
  auto kind = detail::permit_of(*engine_, key, options);
  detail::acquire_async(engine_, "acquire_permit", key, std::move(kind), std::move(options.lock),
                        std::move(callback));
}

Result<Lock> Client::read_lock(std::string_view key, const LockOptions& options) {
  return detail::acquire_sync(engine_, "read_lock", detail::rw_of(*engine_, key, options, false),
                              options);
}

void Client::read_lock_async(std::string_view key, LockOptions options, LockCallback callback) {
  auto kind = detail::rw_of(*engine_, key, options, false);
  detail::acquire_async(engine_, "read_lock", key, std::move(kind), std::move(options),
                        std::move(callback));
}

Result<Lock> Client::write_lock(std::string_view key, const LockOptions& options) {
  return detail::acquire_sync(engine_, "write_lock", detail::rw_of(*engine_, key, options, true),
                              options);
}

void Client::write_lock_async(std::string_view key, LockOptions options, LockCallback callback) {
  auto kind = detail::rw_of(*engine_, key, options, true);
  detail::acquire_async(engine_, "write_lock", key, std::move(kind), std::move(options),
                        std::move(callback));
}

Result<Lock> Client::lock_all(std::span<const std::string> keys, const LockOptions& options) {
  return detail::acquire_sync(engine_, "lock_all", detail::keys_of(*engine_, keys, options),
                              options);
}

void Client::lock_all_async(std::span<const std::string> keys, LockOptions options,
                            LockCallback callback) {
  auto kind = detail::keys_of(*engine_, keys, options);
  const std::string first = keys.empty() ? std::string() : keys.front();
  detail::acquire_async(engine_, "lock_all", first, std::move(kind), std::move(options),
                        std::move(callback));
}

Result<int> Client::semaphore_quorum(int permits, int quorum) const {
  return detail::permit_quorum(*engine_, permits, quorum);
}

Result<std::vector<NodeOutcome>> Client::status(std::string_view key) {
  if (auto problem = engine_->check_lock_key(key)) return invalid("status", *problem);
  return detail::call_sync<std::vector<NodeOutcome>>(
      *engine_, "status",
      [engine = engine_, key = std::string(key),
       timeout = detail::diagnostic_timeout(*engine_)](auto deliver) mutable {
        detail::start_status(engine, std::move(key), timeout, std::move(deliver));
      });
}

void Client::status_async(std::string_view key, StatusCallback callback) {
  detail::call_async<std::vector<NodeOutcome>>(
      *engine_, "status_async", quoted("status", key),
      invalid_if("status", engine_->check_lock_key(key)),
      [engine = engine_, key = std::string(key),
       timeout = detail::diagnostic_timeout(*engine_)](auto deliver) mutable {
        detail::start_status(engine, std::move(key), timeout, std::move(deliver));
      },
      std::move(callback));
}

Result<std::vector<NodeView>> Client::inspect(std::string_view key) {
  if (auto problem = engine_->check_lock_key(key)) {
    return Error(make_error_code(errc::invalid_argument), "inspect: " + *problem);
  }
  return detail::call_sync<std::vector<NodeView>>(
      *engine_, "inspect",
      [engine = engine_, key = std::string(key),
       timeout = detail::diagnostic_timeout(*engine_)](auto deliver) mutable {
        detail::start_inspect(engine, std::move(key), timeout, std::move(deliver));
      });
}

void Client::inspect_async(std::string_view key, InspectCallback callback) {
  std::optional<Error> problem;
  if (auto text = engine_->check_lock_key(key)) {
    problem = Error(make_error_code(errc::invalid_argument), "inspect: " + *text);
  }
  detail::call_async<std::vector<NodeView>>(
      *engine_, "inspect_async", "inspect " + detail::quote_key(key), std::move(problem),
      [engine = engine_, key = std::string(key),
       timeout = detail::diagnostic_timeout(*engine_)](auto deliver) mutable {
        detail::start_inspect(engine, std::move(key), timeout, std::move(deliver));
      },
      std::move(callback));
}

Result<void> Client::release(std::string_view key, std::string_view value) {
  if (auto problem = engine_->check_lock_key(key)) return invalid("release", *problem);
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

void Client::release_async(std::string_view key, std::string_view value, DoneCallback callback) {
  auto problem = invalid_if("release", engine_->check_lock_key(key));
  if (!problem && value.empty()) problem = invalid_if("release", "value: must not be empty");
  detail::call_async<void>(
      *engine_, "release_async", quoted("release", key), std::move(problem),
      [engine = engine_, key = std::string(key), value = std::string(value),
       timeout = detail::diagnostic_timeout(*engine_)](auto deliver) mutable {
        detail::start_release(engine, key, std::move(value), timeout,
                              [key, deliver](Result<detail::Released> released) {
                                if (!released) return deliver(std::move(released).error());
                                if (released->deleted > 0) return deliver({});
                                deliver(Error(make_error_code(errc::not_held),
                                              "release " + detail::quote_key(key) +
                                                  ": no node that answered held this value",
                                              std::move(released->outcomes)));
                              });
      },
      std::move(callback));
}

Result<milliseconds> Client::extend(std::string_view key, std::string_view value,
                                    milliseconds ttl) {
  if (auto problem = engine_->check_lock_key(key)) return invalid("extend", *problem);
  if (value.empty()) return invalid("extend", "value: must not be empty");
  if (auto problem = engine_->check_extend_ttl(ttl)) return invalid("extend", *problem);
  auto extended = detail::call_sync<core::Clock::time_point>(
      *engine_, "extend",
      [engine = engine_, key = std::string(key), value = std::string(value),
       ttl](auto deliver) mutable {
        detail::start_extend(engine, std::move(key), std::move(value), ttl, std::move(deliver));
      });
  if (!extended) return std::move(extended).error();
  return core::validity_left(*extended, core::Clock::now());
}

void Client::extend_async(std::string_view key, std::string_view value, milliseconds ttl,
                          ExtendCallback callback) {
  auto problem = invalid_if("extend", engine_->check_lock_key(key));
  if (!problem && value.empty()) problem = invalid_if("extend", "value: must not be empty");
  if (!problem) problem = invalid_if("extend", engine_->check_extend_ttl(ttl));
  detail::call_async<milliseconds>(
      *engine_, "extend_async", quoted("extend", key), std::move(problem),
      [engine = engine_, key = std::string(key), value = std::string(value),
       ttl](auto deliver) mutable {
        detail::start_extend(engine, std::move(key), std::move(value), ttl,
                             [deliver](Result<core::Clock::time_point> extended) {
                               if (!extended) return deliver(std::move(extended).error());
                               deliver(core::validity_left(*extended, core::Clock::now()));
                             });
      },
      std::move(callback));
}

}  // namespace redlock

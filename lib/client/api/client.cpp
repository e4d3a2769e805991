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
  return detail::acquire_sync(engine_, "lock", key, detail::exclusive_of(*engine_, key, options),
                              options);
}

void Client::lock_async(std::string_view key, LockOptions options, LockCallback callback) {
  auto kind = detail::exclusive_of(*engine_, key, options);
  detail::acquire_async(engine_, "lock", key, std::move(kind), std::move(options),
                        std::move(callback));
}

Result<Lock> Client::acquire_permit(std::string_view key, const SemaphoreOptions& options) {
  return detail::acquire_sync(engine_, "acquire_permit", key,
                              detail::permit_of(*engine_, key, options), options.lock);
}

void Client::acquire_permit_async(std::string_view key, SemaphoreOptions options,
                                  LockCallback callback) {
  auto kind = detail::permit_of(*engine_, key, options);
  detail::acquire_async(engine_, "acquire_permit", key, std::move(kind), std::move(options.lock),
                        std::move(callback));
}

Result<Lock> Client::read_lock(std::string_view key, const LockOptions& options) {
  return detail::acquire_sync(engine_, "read_lock", key,
                              detail::rw_of(*engine_, key, options, false), options);
}

void Client::read_lock_async(std::string_view key, LockOptions options, LockCallback callback) {
  auto kind = detail::rw_of(*engine_, key, options, false);
  detail::acquire_async(engine_, "read_lock", key, std::move(kind), std::move(options),
                        std::move(callback));
}

Result<Lock> Client::write_lock(std::string_view key, const LockOptions& options) {
  return detail::acquire_sync(engine_, "write_lock", key,
                              detail::rw_of(*engine_, key, options, true), options);
}

void Client::write_lock_async(std::string_view key, LockOptions options, LockCallback callback) {
  auto kind = detail::rw_of(*engine_, key, options, true);
  detail::acquire_async(engine_, "write_lock", key, std::move(kind), std::move(options),
                        std::move(callback));
}

Result<Lock> Client::lock_all(std::span<const std::string> keys, const LockOptions& options) {
  const std::string_view first = keys.empty() ? std::string_view() : std::string_view(keys.front());
  return detail::acquire_sync(engine_, "lock_all", first, detail::keys_of(*engine_, keys, options),
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
  return detail::call_sync<std::vector<NodeOutcome>>(
      *engine_, {"status", key}, invalid_if("status", engine_->check_lock_key(key)),
      [engine = engine_, key = std::string(key),
       timeout = detail::diagnostic_timeout(*engine_)](auto deliver) mutable {
        detail::start_status(engine, std::move(key), timeout, std::move(deliver));
      });
}

void Client::status_async(std::string_view key, StatusCallback callback) {
  detail::call_async<std::vector<NodeOutcome>>(
      *engine_, {"status_async", {"status", key}},
      invalid_if("status", engine_->check_lock_key(key)),
      [engine = engine_, key = std::string(key), timeout = detail::diagnostic_timeout(*engine_)](
          auto answer) mutable { detail::start_status(engine, std::move(key), timeout, answer); },
      std::move(callback));
}

Result<std::vector<NodeView>> Client::inspect(std::string_view key) {
  return detail::call_sync<std::vector<NodeView>>(
      *engine_, {"inspect", key}, invalid_if("inspect", engine_->check_lock_key(key)),
      [engine = engine_, key = std::string(key),
       timeout = detail::diagnostic_timeout(*engine_)](auto deliver) mutable {
        detail::start_inspect(engine, std::move(key), timeout, std::move(deliver));
      });
}

void Client::inspect_async(std::string_view key, InspectCallback callback) {
  detail::call_async<std::vector<NodeView>>(
      *engine_, {"inspect_async", {"inspect", key}},
      invalid_if("inspect", engine_->check_lock_key(key)),
      [engine = engine_, key = std::string(key), timeout = detail::diagnostic_timeout(*engine_)](
          auto answer) mutable { detail::start_inspect(engine, std::move(key), timeout, answer); },
      std::move(callback));
}

namespace {

std::optional<Error> release_problem(const detail::Engine& engine, std::string_view key,
                                     std::string_view value) {
  auto problem = invalid_if("release", engine.check_lock_key(key));
  if (!problem && value.empty()) problem = invalid("release", "value: must not be empty");
  return problem;
}

std::optional<Error> extend_problem(const detail::Engine& engine, std::string_view key,
                                    std::string_view value, milliseconds ttl) {
  auto problem = invalid_if("extend", engine.check_lock_key(key));
  if (!problem && value.empty()) problem = invalid("extend", "value: must not be empty");
  if (!problem) problem = invalid_if("extend", engine.check_extend_ttl(ttl));
  return problem;
}

/// A release's answer: success once some node deleted the value, else not_held.
Result<void> released_or_not_held(std::string_view key, Result<detail::Released> released) {
  if (!released) return std::move(released).error();
  if (released->deleted > 0) return {};
  return Error(make_error_code(errc::not_held),
               "release " + detail::quote_key(key) + ": no node that answered held this value",
               std::move(released->outcomes));
}

}  // namespace

Result<void> Client::release(std::string_view key, std::string_view value) {
  auto released = detail::call_sync<detail::Released>(
      *engine_, {"release", key}, release_problem(*engine_, key, value),
      [engine = engine_, key = std::string(key), value = std::string(value),
       timeout = detail::diagnostic_timeout(*engine_)](auto deliver) mutable {
        detail::start_release(engine, std::move(key), std::move(value), timeout,
                              std::move(deliver));
      });
  return released_or_not_held(key, std::move(released));
}

void Client::release_async(std::string_view key, std::string_view value, DoneCallback callback) {
  detail::call_async<void>(
      *engine_, {"release_async", {"release", key}}, release_problem(*engine_, key, value),
      [engine = engine_, key = std::string(key), value = std::string(value),
       timeout = detail::diagnostic_timeout(*engine_)](auto answer) mutable {
        detail::start_release(engine, key, std::move(value), timeout,
                              [key, answer](Result<detail::Released> released) {
                                answer(released_or_not_held(key, std::move(released)));
                              });
      },
      std::move(callback));
}

Result<milliseconds> Client::extend(std::string_view key, std::string_view value,
                                    milliseconds ttl) {
  auto extended = detail::call_sync<core::Clock::time_point>(
      *engine_, {"extend", key}, extend_problem(*engine_, key, value, ttl),
      [engine = engine_, key = std::string(key), value = std::string(value),
       ttl](auto deliver) mutable {
        detail::start_extend(engine, std::move(key), std::move(value), ttl, std::move(deliver));
      });
  if (!extended) return std::move(extended).error();
  return core::validity_left(*extended, core::Clock::now());
}

void Client::extend_async(std::string_view key, std::string_view value, milliseconds ttl,
                          ExtendCallback callback) {
  detail::call_async<milliseconds>(
      *engine_, {"extend_async", {"extend", key}}, extend_problem(*engine_, key, value, ttl),
      [engine = engine_, key = std::string(key), value = std::string(value),
       ttl](auto answer) mutable {
        detail::start_extend(engine, std::move(key), std::move(value), ttl,
                             [answer](Result<core::Clock::time_point> extended) {
                               if (!extended) return answer(std::move(extended).error());
                               answer(core::validity_left(*extended, core::Clock::now()));
                             });
      },
      std::move(callback));
}

}  // namespace redlock

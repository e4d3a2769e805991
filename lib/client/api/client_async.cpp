// The asynchronous forms of Client's and Lock's operations (client.hpp, lock.hpp): the
// same checks and operations as the synchronous ones, with lock_async's callback
// contract.

#include <redlock/client.hpp>
#include <redlock/lock.hpp>

#include "client/calls/async_call.hpp"
#include "client/engine/engine.hpp"
#include "client/kinds/lock_state.hpp"
#include "client/operations/lock_extension.hpp"
#include "client/operations/operations.hpp"
#include "core/validation.hpp"

namespace redlock {

using std::chrono::milliseconds;

namespace {

std::optional<Error> invalid_if(std::string_view what, std::optional<std::string> problem) {
  if (!problem) return std::nullopt;
  return Error(make_error_code(errc::invalid_argument), std::string(what) + ": " + *problem);
}

std::string quoted(std::string_view what, std::string_view key) {
  return std::string(what) + " " + detail::quote_key(key);
}

}  // namespace

void Client::try_lock_async(std::string_view key, milliseconds ttl, LockCallback callback) {
  LockOptions options;
  options.ttl = ttl;
  lock_async(key, std::move(options), std::move(callback));
}

void Client::status_async(std::string_view key, StatusCallback callback) {
  detail::call_async<std::vector<NodeOutcome>>(
      *engine_, "status_async", quoted("status", key),
      invalid_if("status", core::check_key(key, engine_->options().max_key_bytes)),
      [engine = engine_, key = std::string(key),
       timeout = detail::diagnostic_timeout(*engine_)](auto deliver) mutable {
        detail::start_status(engine, std::move(key), timeout, std::move(deliver));
      },
      std::move(callback));
}

void Client::release_async(std::string_view key, std::string_view value, DoneCallback callback) {
  auto problem = invalid_if("release", core::check_key(key, engine_->options().max_key_bytes));
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

void Client::extend_async(std::string_view key, std::string_view value, milliseconds ttl,
                          ExtendCallback callback) {
  auto problem = invalid_if("extend", core::check_key(key, engine_->options().max_key_bytes));
  if (!problem && value.empty()) problem = invalid_if("extend", "value: must not be empty");
  if (!problem)
    problem = invalid_if("extend", core::check_ttl(ttl, engine_->options().node_timeout));
  detail::call_async<milliseconds>(
      *engine_, "extend_async", quoted("extend", key), std::move(problem),
      [engine = engine_, key = std::string(key), value = std::string(value),
       ttl](auto deliver) mutable {
        detail::start_extend(engine, nullptr, std::move(key), std::move(value), ttl,
                             [deliver](Result<core::Clock::time_point> extended) {
                               if (!extended) return deliver(std::move(extended).error());
                               deliver(core::validity_left(*extended, core::Clock::now()));
                             });
      },
      std::move(callback));
}

void Lock::extend_async(milliseconds ttl, std::function<void(Result<void>)> done) {
  if (!state_) {
    return done(Error(make_error_code(errc::not_held), "extend: this Lock was moved from"));
  }
  detail::call_async<void>(
      *state_->engine, "extend_async", quoted("extend", state_->resource),
      invalid_if("extend", core::check_ttl(ttl, state_->engine->options().node_timeout)),
      [state = state_, ttl](auto deliver) {
        detail::extend_lock(state, ttl, [deliver](Result<core::Clock::time_point> extended) {
          if (!extended) return deliver(std::move(extended).error());
          deliver({});
        });
      },
      std::move(done));
}

}  // namespace redlock

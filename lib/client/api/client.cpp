#include <redlock/client.hpp>

#include "client/api/client_access.hpp"
#include "client/calls/acquire_call.hpp"
#include "client/calls/sync_call.hpp"
#include "client/engine/engine.hpp"
#include "client/operations/operations.hpp"
#include "core/validation.hpp"

namespace redlock {

using std::chrono::milliseconds;

namespace {

Error invalid(std::string_view what, const std::string& problem) {
  return Error(make_error_code(errc::invalid_argument), std::string(what) + ": " + problem);
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

namespace {

/// The exclusive lock on `key`, or why `options` or the key are refused.
Result<detail::Kind> exclusive_of(const detail::Engine& engine, std::string_view key,
                                  const LockOptions& options) {
  if (auto problem = core::check_key(key, engine.options().max_key_bytes))
    return invalid("lock", *problem);
  if (auto problem = detail::check_acquire_options(engine, "lock", options)) return *problem;
  return detail::Kind::exclusive(std::string(key));
}

}  // namespace

Result<Lock> Client::lock(std::string_view key, const LockOptions& options) {
  return detail::acquire_sync(engine_, "lock", exclusive_of(*engine_, key, options), options);
}

void Client::lock_async(std::string_view key, LockOptions options, LockCallback callback) {
  auto kind = exclusive_of(*engine_, key, options);
  detail::acquire_async(engine_, "lock", key, std::move(kind), std::move(options),
                        std::move(callback));
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
        detail::start_extend(engine, nullptr, std::move(key), std::move(value), ttl,
                             std::move(deliver));
      });
  if (!extended) return std::move(extended).error();
  return core::validity_left(*extended, core::Clock::now());
}

}  // namespace redlock

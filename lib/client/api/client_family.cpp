// Client's methods of the lock family: validation, the quorum, and the hop to the loop.

#include <algorithm>
#include <unordered_set>

#include <redlock/client.hpp>

#include "client/calls/acquire_call.hpp"
#include "client/calls/async_call.hpp"
#include "client/calls/sync_call.hpp"
#include "client/engine/engine.hpp"
#include "client/kinds/held.hpp"
#include "client/kinds/lock_state.hpp"
#include "client/operations/inspect.hpp"
#include "core/family_quorum.hpp"
#include "core/lock_value.hpp"
#include "core/validation.hpp"

namespace redlock {

using std::chrono::milliseconds;

namespace {

Error invalid_permit(const std::string& problem) {
  return Error(make_error_code(errc::invalid_argument), "acquire_permit: " + problem);
}

/// The descriptor of a permit of `key`, or why the options are refused.
Result<std::shared_ptr<const detail::Held>> permit_of(const detail::Engine& engine,
                                                      std::string_view key,
                                                      const SemaphoreOptions& options) {
  if (auto problem = core::check_key(key, engine.options().max_key_bytes))
    return invalid_permit(*problem);
  if (auto problem = detail::check_acquire_options(engine, "acquire_permit", options.lock))
    return *problem;
  if (options.lock.fencing) {
    return invalid_permit(
        "fencing: semaphore permits carry no fencing token (K holders at once have no order "
        "a storage could enforce)");
  }
  std::string problem;
  const auto quorum =
      core::semaphore_quorum_for(static_cast<int>(engine.node_names().size()), options.permits,
                                 options.quorum, engine.quorum(), problem);
  if (!quorum) return invalid_permit(problem);
  auto held = std::make_shared<detail::Held>();
  held->primitive = detail::Primitive::permit;
  held->key = std::string(key);
  held->permits = options.permits;
  held->quorum = *quorum;
  return std::shared_ptr<const detail::Held>(std::move(held));
}

/// A read or write hold of the read-write lock `key`, or why the options are refused.
Result<std::shared_ptr<const detail::Held>> rw_of(const detail::Engine& engine,
                                                  std::string_view key, const LockOptions& options,
                                                  bool writer) {
  const char* what = writer ? "write_lock: " : "read_lock: ";
  auto invalid = [&](const std::string& problem) {
    return Error(make_error_code(errc::invalid_argument), what + problem);
  };
  if (auto problem = core::check_key(key, engine.options().max_key_bytes)) return invalid(*problem);
  if (auto problem =
          detail::check_acquire_options(engine, writer ? "write_lock" : "read_lock", options))
    return *problem;
  if (!writer && options.fencing) {
    return invalid(
        "fencing: readers carry no fencing token (they share; only writers are ordered)");
  }
  auto held = std::make_shared<detail::Held>();
  held->primitive = writer ? detail::Primitive::writer : detail::Primitive::reader;
  held->key = std::string(key);
  held->quorum = engine.quorum();
  if (writer) {
    held->intent = core::new_lock_value();
    const auto& client = engine.options();
    // Long enough to outlive the retries between two attempts, never longer than the
    // lock's own TTL (a ttl below 250 ms makes that the bound).
    held->intent_ttl = std::min<milliseconds>(
        std::max<milliseconds>(4 * (client.retry_delay + client.retry_jitter), milliseconds(250)),
        options.ttl);
  }
  return std::shared_ptr<const detail::Held>(std::move(held));
}

/// A key set, or why it is refused.
Result<std::shared_ptr<const detail::Held>> keys_of(const detail::Engine& engine,
                                                    std::span<const std::string> keys,
                                                    const LockOptions& options) {
  auto invalid = [](const std::string& problem) {
    return Error(make_error_code(errc::invalid_argument), "lock_all: " + problem);
  };
  if (keys.empty()) return invalid("keys: the key list is empty");
  if (auto problem = detail::check_acquire_options(engine, "lock_all", options)) return *problem;
  std::unordered_set<std::string_view> seen;
  for (const auto& key : keys) {
    if (auto problem = core::check_key(key, engine.options().max_key_bytes))
      return invalid(*problem);
    if (!seen.insert(key).second) {
      return invalid("keys: " + detail::quote_key(key) + " is given twice");
    }
  }
  auto held = std::make_shared<detail::Held>();
  held->primitive = detail::Primitive::keys;
  held->key = keys.front();
  held->keys.assign(keys.begin(), keys.end());
  held->quorum = engine.quorum();
  return std::shared_ptr<const detail::Held>(std::move(held));
}

Result<detail::Kind> kind_of(Result<std::shared_ptr<const detail::Held>> held) {
  if (!held) return std::move(held).error();
  return detail::Kind::of(std::move(*held));
}

}  // namespace

Result<int> Client::semaphore_quorum(int permits, int quorum) const {
  std::string problem;
  const auto q = core::semaphore_quorum_for(static_cast<int>(engine_->node_names().size()), permits,
                                            quorum, engine_->quorum(), problem);
  if (!q) return invalid_permit(problem);
  return *q;
}

Result<Lock> Client::acquire_permit(std::string_view key, const SemaphoreOptions& options) {
  return detail::acquire_sync(engine_, "acquire_permit", kind_of(permit_of(*engine_, key, options)),
                              options.lock);
}

void Client::acquire_permit_async(std::string_view key, SemaphoreOptions options,
                                  LockCallback callback) {
  auto kind = kind_of(permit_of(*engine_, key, options));
  detail::acquire_async(engine_, "acquire_permit", key, std::move(kind), std::move(options.lock),
                        std::move(callback));
}

Result<Lock> Client::lock_all(std::span<const std::string> keys, const LockOptions& options) {
  return detail::acquire_sync(engine_, "lock_all", kind_of(keys_of(*engine_, keys, options)),
                              options);
}

void Client::lock_all_async(std::span<const std::string> keys, LockOptions options,
                            LockCallback callback) {
  auto kind = kind_of(keys_of(*engine_, keys, options));
  const std::string first = keys.empty() ? std::string() : keys.front();
  detail::acquire_async(engine_, "lock_all", first, std::move(kind), std::move(options),
                        std::move(callback));
}

std::vector<std::string> Lock::resources() const {
  if (!state_) return {};
  if (state_->held && state_->held->primitive == detail::Primitive::keys) return state_->held->keys;
  return {state_->resource};
}

std::optional<std::uint64_t> Lock::fencing_token(std::string_view key) const {
  if (!state_) return std::nullopt;
  const auto& held = state_->held;
  if (held && held->primitive == detail::Primitive::keys) {
    for (std::size_t i = 0; i < held->keys.size() && i < state_->tokens.size(); ++i) {
      if (held->keys[i] == key) return state_->tokens[i];
    }
    return std::nullopt;
  }
  return key == state_->resource ? state_->token : std::nullopt;
}

Result<Lock> Client::read_lock(std::string_view key, const LockOptions& options) {
  return detail::acquire_sync(engine_, "read_lock", kind_of(rw_of(*engine_, key, options, false)),
                              options);
}

void Client::read_lock_async(std::string_view key, LockOptions options, LockCallback callback) {
  auto kind = kind_of(rw_of(*engine_, key, options, false));
  detail::acquire_async(engine_, "read_lock", key, std::move(kind), std::move(options),
                        std::move(callback));
}

Result<Lock> Client::write_lock(std::string_view key, const LockOptions& options) {
  return detail::acquire_sync(engine_, "write_lock", kind_of(rw_of(*engine_, key, options, true)),
                              options);
}

void Client::write_lock_async(std::string_view key, LockOptions options, LockCallback callback) {
  auto kind = kind_of(rw_of(*engine_, key, options, true));
  detail::acquire_async(engine_, "write_lock", key, std::move(kind), std::move(options),
                        std::move(callback));
}

Result<std::vector<NodeView>> Client::inspect(std::string_view key) {
  if (auto problem = core::check_key(key, engine_->options().max_key_bytes)) {
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
  if (auto text = core::check_key(key, engine_->options().max_key_bytes)) {
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

}  // namespace redlock

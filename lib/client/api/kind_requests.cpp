#include "client/api/kind_requests.hpp"

#include <algorithm>
#include <unordered_set>

#include "client/calls/acquire_call.hpp"
#include "client/engine/engine.hpp"
#include "client/kinds/held.hpp"
#include "client/util/messages.hpp"
#include "core/family_quorum.hpp"
#include "core/lock_value.hpp"
#include "core/validation.hpp"

namespace redlock::detail {

using std::chrono::milliseconds;

namespace {

Error invalid_permit(const std::string& problem) {
  return Error(make_error_code(errc::invalid_argument), "acquire_permit: " + problem);
}

/// The descriptor of a permit of `key`, or why the options are refused.
Result<std::shared_ptr<const Held>> permit_held(const Engine& engine, std::string_view key,
                                                const SemaphoreOptions& options) {
  if (auto problem = engine.check_lock_key(key)) return invalid_permit(*problem);
  if (auto problem = check_acquire_options(engine, "acquire_permit", options.lock)) return *problem;
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
  auto held = std::make_shared<Held>();
  held->primitive = Primitive::permit;
  held->key = std::string(key);
  held->permits = options.permits;
  held->quorum = *quorum;
  return std::shared_ptr<const Held>(std::move(held));
}

/// A read or write hold of the read-write lock `key`, or why the options are refused.
Result<std::shared_ptr<const Held>> rw_held(const Engine& engine, std::string_view key,
                                            const LockOptions& options, bool writer) {
  const char* what = writer ? "write_lock: " : "read_lock: ";
  auto invalid = [&](const std::string& problem) {
    return Error(make_error_code(errc::invalid_argument), what + problem);
  };
  if (auto problem = engine.check_lock_key(key)) return invalid(*problem);
  if (auto problem = check_acquire_options(engine, writer ? "write_lock" : "read_lock", options))
    return *problem;
  if (!writer && options.fencing) {
    return invalid(
        "fencing: readers carry no fencing token (they share; only writers are ordered)");
  }
  auto held = std::make_shared<Held>();
  held->primitive = writer ? Primitive::writer : Primitive::reader;
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
  return std::shared_ptr<const Held>(std::move(held));
}

/// A key set, or why it is refused.
Result<std::shared_ptr<const Held>> keys_held(const Engine& engine,
                                              std::span<const std::string> keys,
                                              const LockOptions& options) {
  auto invalid = [](const std::string& problem) {
    return Error(make_error_code(errc::invalid_argument), "lock_all: " + problem);
  };
  if (keys.empty()) return invalid("keys: the key list is empty");
  if (auto problem = check_acquire_options(engine, "lock_all", options)) return *problem;
  std::unordered_set<std::string_view> seen;
  for (const auto& key : keys) {
    if (auto problem = engine.check_lock_key(key)) return invalid(*problem);
    if (!seen.insert(key).second) {
      return invalid("keys: " + quote_key(key) + " is given twice");
    }
  }
  auto held = std::make_shared<Held>();
  held->primitive = Primitive::keys;
  held->key = keys.front();
  held->keys.assign(keys.begin(), keys.end());
  held->quorum = engine.quorum();
  return std::shared_ptr<const Held>(std::move(held));
}

Result<Kind> kind_of(Result<std::shared_ptr<const Held>> held) {
  if (!held) return std::move(held).error();
  return Kind::of(std::move(*held));
}

}  // namespace

Result<Kind> exclusive_of(const Engine& engine, std::string_view key, const LockOptions& options) {
  if (auto problem = engine.check_lock_key(key))
    return Error(make_error_code(errc::invalid_argument), "lock: " + *problem);
  if (auto problem = check_acquire_options(engine, "lock", options)) return *problem;
  return Kind::exclusive(std::string(key));
}

Result<Kind> permit_of(const Engine& engine, std::string_view key,
                       const SemaphoreOptions& options) {
  return kind_of(permit_held(engine, key, options));
}

Result<Kind> rw_of(const Engine& engine, std::string_view key, const LockOptions& options,
                   bool writer) {
  return kind_of(rw_held(engine, key, options, writer));
}

Result<Kind> keys_of(const Engine& engine, std::span<const std::string> keys,
                     const LockOptions& options) {
  return kind_of(keys_held(engine, keys, options));
}

Result<int> permit_quorum(const Engine& engine, int permits, int quorum) {
  std::string problem;
  const auto q = core::semaphore_quorum_for(static_cast<int>(engine.node_names().size()), permits,
                                            quorum, engine.quorum(), problem);
  if (!q) return invalid_permit(problem);
  return *q;
}

}  // namespace redlock::detail

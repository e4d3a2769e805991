#include "client/api/kind_requests.hpp"

#include <algorithm>
#include <unordered_set>

#include "client/calls/acquire_call.hpp"
#include "client/engine/engine.hpp"
#include "client/util/messages.hpp"
#include "client/util/spare_texts.hpp"
#include "core/lock_value.hpp"
#include "core/semaphore_quorum.hpp"
#include "core/validation.hpp"

namespace redlock::detail {

using std::chrono::milliseconds;

namespace {

Error invalid_permit(const std::string& problem) {
  return Error(make_error_code(errc::invalid_argument), "acquire_permit: " + problem);
}

}  // namespace

Result<Kind> exclusive_of(const Engine& engine, std::string_view key, const LockOptions& options) {
  if (auto problem = engine.check_lock_key(key))
    return Error(make_error_code(errc::invalid_argument), "lock: " + *problem);
  if (auto problem = check_acquire_options(engine, "lock", options)) return *problem;
  return Kind::exclusive(spare_text(key));
}

Result<Kind> permit_of(const Engine& engine, std::string_view key,
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
  return Kind::permit(spare_text(key), options.permits, *quorum);
}

Result<Kind> rw_of(const Engine& engine, std::string_view key, const LockOptions& options,
                   bool writer) {
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
  if (!writer) return Kind::reader(spare_text(key), engine.quorum());
  const auto& client = engine.options();
  // Long enough to outlive the retries between two attempts, never longer than the
  // lock's own TTL (a ttl below 250 ms makes that the bound).
  const auto intent_ttl = std::min<milliseconds>(
      std::max<milliseconds>(4 * (client.retry_delay + client.retry_jitter), milliseconds(250)),
      options.ttl);
  return Kind::writer(spare_text(key), engine.quorum(), core::new_lock_value(), intent_ttl);
}

Result<Kind> keys_of(const Engine& engine, std::span<const std::string> keys,
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
  return Kind::key_set({keys.begin(), keys.end()}, engine.quorum());
}

Result<int> permit_quorum(const Engine& engine, int permits, int quorum) {
  std::string problem;
  const auto q = core::semaphore_quorum_for(static_cast<int>(engine.node_names().size()), permits,
                                            quorum, engine.quorum(), problem);
  if (!q) return invalid_permit(problem);
  return *q;
}

}  // namespace redlock::detail

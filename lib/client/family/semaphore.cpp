// Client's counting-semaphore methods: validation, the quorum, and the hop to the loop.

#include <redlock/client.hpp>

#include "client/engine.hpp"
#include "client/family/held.hpp"
#include "client/sync_call.hpp"
#include "core/family_quorum.hpp"
#include "core/validation.hpp"

namespace redlock {

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
  if (auto problem = core::check_lock_options(options.lock, engine.options().node_timeout))
    return invalid_permit(*problem);
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

}  // namespace

Result<int> Client::semaphore_quorum(int permits, int quorum) const {
  std::string problem;
  const auto q = core::semaphore_quorum_for(static_cast<int>(engine_->node_names().size()), permits,
                                            quorum, engine_->quorum(), problem);
  if (!q) return invalid_permit(problem);
  return *q;
}

Result<Lock> Client::acquire_permit(std::string_view key, const SemaphoreOptions& options) {
  auto held = permit_of(*engine_, key, options);
  if (!held) return std::move(held).error();
  auto acquired = detail::call_sync<std::shared_ptr<detail::LockState>>(
      *engine_, "acquire_permit",
      [engine = engine_, held = std::move(*held), options = options.lock](auto deliver) mutable {
        detail::start_family_acquire(engine, std::move(held), std::move(options),
                                     std::move(deliver));
      });
  if (!acquired) return std::move(acquired).error();
  return Lock(std::move(*acquired));
}

void Client::acquire_permit_async(std::string_view key, SemaphoreOptions options,
                                  LockCallback callback) {
  auto shared_callback = std::make_shared<LockCallback>(std::move(callback));
  auto deliver = [shared_callback](Result<std::shared_ptr<detail::LockState>> acquired) {
    if (!acquired) return (*shared_callback)(std::move(acquired).error());
    (*shared_callback)(Lock(std::move(*acquired)));
  };
  auto held = permit_of(*engine_, key, options);
  const bool posted = engine_->post([engine = engine_, held = std::move(held),
                                     lock = std::move(options.lock), deliver]() mutable {
    if (!held) return deliver(std::move(held).error());
    detail::start_family_acquire(engine, std::move(*held), std::move(lock), std::move(deliver));
  });
  if (!posted) deliver(detail::cancelled_error("acquire_permit " + detail::quote_key(key)));
}

}  // namespace redlock

#include "worker/lowered_permit_quorum.hpp"

#include <string>
#include <utility>

#include "client/api/client_access.hpp"
#include "client/calls/acquire_call.hpp"
#include "client/calls/sync_call.hpp"
#include "client/engine/engine.hpp"
#include "client/kinds/kind.hpp"
#include "client/kinds/lock_state.hpp"
#include "client/operations/acquire.hpp"

namespace redlock::chaos {

LoweredPermitQuorum::LoweredPermitQuorum(const Options& options, int quorum)
    : engine_(detail::Engine::create(options)),
      client_(detail::ClientAccess::make(engine_)),
      quorum_(quorum) {}

Result<Lock> LoweredPermitQuorum::acquire_permit(std::string_view key,
                                                 const SemaphoreOptions& options) {
  auto acquired = detail::call_sync<std::shared_ptr<detail::LockState>>(
      *engine_, "acquire_permit",
      [engine = engine_, kind = detail::Kind::permit(std::string(key), options.permits, quorum_),
       lock = options.lock](auto deliver) mutable {
        detail::start_acquire(engine, std::move(kind), std::move(lock), std::move(deliver));
      });
  if (!acquired) return std::move(acquired).error();
  return detail::LockMaker::make(std::move(*acquired));
}

}  // namespace redlock::chaos

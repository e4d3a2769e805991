#include "worker/lowered_election_quorum.hpp"

#include <utility>

#include "client/api/client_access.hpp"
#include "client/calls/acquire_call.hpp"
#include "client/calls/sync_call.hpp"
#include "client/engine/engine.hpp"
#include "client/kinds/kind.hpp"
#include "client/kinds/lock_state.hpp"
#include "client/operations/acquire.hpp"

namespace redlock::chaos {

LoweredElectionQuorum::LoweredElectionQuorum(const Options& options, int quorum)
    : engine_(detail::Engine::create(options)),
      client_(detail::ClientAccess::make(engine_)),
      quorum_(quorum) {}

Result<Lock> LoweredElectionQuorum::campaign(const std::string& key, std::chrono::milliseconds ttl,
                                             std::chrono::milliseconds wait) {
  LockOptions options;
  options.ttl = ttl;
  options.wait = wait;
  options.fencing = true;
  options.auto_extend = true;
  auto acquired = detail::call_sync<std::shared_ptr<detail::LockState>>(
      *engine_, "campaign",
      [engine = engine_, kind = detail::Kind::key_set({key}, quorum_),
       options = std::move(options)](auto deliver) mutable {
        detail::start_acquire(engine, std::move(kind), std::move(options), std::move(deliver));
      });
  if (!acquired) return std::move(acquired).error();
  return detail::LockMaker::make(std::move(*acquired));
}

}  // namespace redlock::chaos

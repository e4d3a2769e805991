#pragma once
// Acquiring any kind of lock: one operation on the loop thread that runs the acquisition
// machine (core/acquisition.hpp) with the kind's scripts and quorum (client/kinds/kind.hpp).

#include <memory>

#include <redlock/options.hpp>

#include "client/kinds/kind.hpp"
#include "client/operations/operations.hpp"

namespace redlock::detail {

class Engine;

/// Acquires `kind` with `options` (validated by the caller), retrying and waiting until
/// options.wait. `done` runs exactly once on the loop thread, never from inside this call
/// unless it gives up before any attempt (a stop already requested, a closing client).
void start_acquire(const std::shared_ptr<Engine>& engine, Kind kind, LockOptions options,
                   AcquireDone done);

}  // namespace redlock::detail

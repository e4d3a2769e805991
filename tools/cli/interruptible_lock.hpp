#pragma once
// Waiting for a lock while signals stay answerable: `run` blocks SIGINT/SIGTERM/SIGHUP
// from the start (to forward them to its command later), so a plain blocking lock()
// would make `redlock run --wait 10m` deaf to Ctrl-C for ten minutes.

#include <functional>
#include <optional>
#include <string_view>

#include <redlock/client.hpp>

#include "signal_watch.hpp"

namespace redlock::cli {

struct Acquisition {
  /// The outcome of the lock call; empty when a signal ended the wait first.
  std::optional<Result<Lock>> result;
  /// The signal that ended the wait (0 when none did). A lock granted at the same
  /// moment has already been released.
  int interrupted_by = 0;
};

/// Client::lock(), returning early when any watched signal but SIGCHLD arrives.
///
/// A bounded wait covers both a holder and an outage (attempts back off while no quorum
/// is reachable; options.fail_fast gives up at once instead). An endless wait
/// (milliseconds::max(), `run` without --wait) makes its first attempt alone and reports
/// a quorum unreachable then at once: it would otherwise hang forever, and silently, on
/// a mistyped node list.
Acquisition lock_interruptibly(Client& client, std::string_view key, LockOptions options,
                               SignalWatch& signals);

/// Starts one acquisition of any kind (lock_async, acquire_permit_async, read_lock_async,
/// write_lock_async, lock_all_async) with the given options.
using StartAcquire = std::function<void(LockOptions options, Client::LockCallback done)>;

/// lock_interruptibly() for any kind of lock.
Acquisition acquire_interruptibly(const StartAcquire& start, LockOptions options,
                                  SignalWatch& signals);

}  // namespace redlock::cli

#pragma once
// `run` while its command runs: forward the signals the user sends us, watch the lock,
// and send --lost-signal to the command the moment the lock can no longer be trusted.

#include <redlock/lock.hpp>

#include "child_process.hpp"
#include "lost_notice.hpp"
#include "signal_watch.hpp"

namespace redlock::cli {

struct ChildOutcome {
  int wait_status = 0;
  /// The lock was lost (or its validity ended) before the command exited.
  bool lost = false;
  /// The last SIGINT or SIGTERM we received while the command ran (0: none); forwarded
  /// to the command unless the terminal had sent it there too. `elect` ends its loop on it.
  int stop_signal = 0;
};

/// Returns once `child` has exited. The lock counts as lost when `lost` is posted (the
/// watchdog failed) or when the lock's validity runs out, which without auto-extension
/// is the end of the TTL.
ChildOutcome supervise(ChildProcess& child, const Lock& lock, SignalWatch& signals,
                       LostNotice& lost, int lost_signal, int quorum);

}  // namespace redlock::cli

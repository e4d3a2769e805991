#pragma once
// A Redlock client that is not this library: plain SET NX PX on each node in turn, an
// owner-checked delete that publishes nothing, and a retry every 40 ms plus jitter, as
// npm `redlock` or redsync do. Chaos scenarios run it next to the library's own workers to
// show that holders which never announce their release keep mutual exclusion intact (and
// that our waiters still notice them go). Its holds are logged like the library's, without
// a fencing token.

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "worker/event_log.hpp"

namespace redlock::chaos {

struct ForeignSettings {
  std::vector<std::string> nodes;  ///< redis://HOST:PORT URLs (IP literals)
  std::string prefix;
  int keys = 2;
  std::chrono::milliseconds ttl{1000};
  std::chrono::milliseconds wait{1000};
  std::chrono::milliseconds hold{20};
  std::chrono::milliseconds duration{10'000};
  unsigned seed = 1;
};

/// Runs one foreign client thread until `duration` ends or `stop` is set.
void run_foreign_client(const ForeignSettings& settings, const std::string& name, EventLog& log,
                        const std::atomic<bool>& stop);

}  // namespace redlock::chaos

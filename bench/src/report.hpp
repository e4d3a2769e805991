#pragma once
// The one JSON line a run prints, in the redlock-bench/v1 schema shared with the peers'
// benches (field names, units and rounding as there), plus a few fields of our own that
// explain the cost: commands and read batches per cycle on the nodes, context switches
// per cycle in the client, and the growth of its memory during the window.

#include <optional>
#include <string>

#include "config.hpp"
#include "process_usage.hpp"
#include "redis_admin.hpp"
#include "tally.hpp"

namespace redlock_bench {

struct RunFacts {
  const Config* config = nullptr;
  int quorum = 0;
  long long effective_node_timeout_ms = 0;
  double elapsed_s = 0;
  Tally tally;
  ProcessUsage usage;  ///< deltas over the window
  double rss_start_mb = 0;
  double rss_end_mb = 0;
  /// Deltas over the window, of the nodes not paused (all nodes in a healthy run).
  std::optional<NodeCounters> redis;
  int in_flight_at_end = 0;
  bool all_workers_stopped = true;
};

/// Serializes one run as a single line of JSON (no trailing newline).
std::string report_line(RunFacts facts);

}  // namespace redlock_bench

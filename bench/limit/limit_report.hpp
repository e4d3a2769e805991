#pragma once
// The JSON line of one limit run, in the redlock-bench/v1 schema with redlock-bench's
// field names, so a report joins the limit's rows with the library's and npm redlock's.

#include <cstdint>
#include <optional>
#include <string>

#include "latency.hpp"
#include "limit_options.hpp"
#include "process_usage.hpp"
#include "redis_admin.hpp"

namespace redlock_limit {

struct LimitRun {
  const LimitOptions* options = nullptr;
  int quorum = 0;
  double elapsed_s = 0;
  std::uint64_t attempts = 0;
  std::uint64_t cycles = 0;  ///< acquires granted by a quorum, each followed by its release
  std::uint64_t failures = 0;
  std::uint64_t release_failures = 0;  ///< releases not confirmed by every node
  std::uint64_t replies = 0;
  std::uint64_t granted_replies = 0;
  std::uint64_t error_replies = 0;
  redlock_bench::LatencySamples acquire;
  redlock_bench::LatencySamples acquire_fail;
  redlock_bench::LatencySamples release;
  redlock_bench::LatencySamples cycle;
  redlock_bench::ProcessUsage usage;  ///< deltas over the window
  double rss_start_mb = 0;
  double rss_end_mb = 0;
  std::optional<redlock_bench::NodeCounters> redis;  ///< deltas over the window
};

/// The share of all replies that granted: a cycle that did not really lock and unlock
/// must not pass for a fast one.
double granted_ratio(const LimitRun& run);

/// Serializes one run as a single line of JSON (no trailing newline).
std::string limit_report_line(LimitRun& run);

}  // namespace redlock_limit

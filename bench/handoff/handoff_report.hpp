#pragma once
// The JSON line of one handoff run, in the redlock-bench/v1 schema with redlock-bench's
// names for the client's cost, so bench/compare can set it beside the limit's rows.

#include <cstdint>
#include <string>

#include "handoff_options.hpp"
#include "process_usage.hpp"

namespace redlock_handoff {

/// A lock+unlock cycle of the synchronous API posts to the loop thread and waits twice.
inline constexpr std::uint64_t handoffs_per_cycle = 2;

struct HandoffRun {
  const HandoffOptions* options = nullptr;
  double elapsed_s = 0;
  std::uint64_t cycles = 0;           ///< completed inside the window
  redlock_bench::ProcessUsage usage;  ///< deltas over the window
  double rss_start_mb = 0;
  double rss_end_mb = 0;
};

/// Serializes one run as a single line of JSON (no trailing newline).
std::string handoff_report_line(const HandoffRun& run);

}  // namespace redlock_handoff

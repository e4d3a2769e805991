#pragma once
// What the workers record inside the window: counts, latency samples and the kinds of
// errors, one Tally per worker (no sharing on the hot path), merged at the end.

#include <cstdint>
#include <map>
#include <string>
#include <system_error>
#include <vector>

#include "latency.hpp"

namespace redlock_bench {

struct Tally {
  std::uint64_t attempts = 0;
  std::uint64_t cycles = 0;
  std::uint64_t failures = 0;
  std::uint64_t release_failures = 0;
  LatencySamples acquire_ok;
  LatencySamples acquire_fail;
  LatencySamples release;
  LatencySamples cycle;
  std::map<std::string, std::uint64_t> error_kinds;
  /// Cycles of each worker, to show who got the lock (hot mode: fairness).
  std::vector<std::uint64_t> cycles_by_worker;

  void merge(const Tally& other);
  std::size_t sample_bytes() const;
};

/// A short stable name for an error code ("conflict", "quorum_unreachable", ...).
std::string error_kind(std::error_code code);

}  // namespace redlock_bench

#pragma once
// The client process' own cost: CPU time of all its threads, context switches (each
// blocking wait that ends is one voluntary switch, so they count wakeups), and resident
// memory.

#include <cstdint>

namespace redlock_bench {

struct ProcessUsage {
  double user_us = 0;
  double system_us = 0;
  std::int64_t voluntary_switches = 0;
  std::int64_t involuntary_switches = 0;
};

ProcessUsage process_usage();
/// Resident set size now, in MB (from /proc/self/statm).
double resident_mb();

}  // namespace redlock_bench

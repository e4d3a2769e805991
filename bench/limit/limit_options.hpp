#pragma once
// The command line of redlock-fanout-limit. Its flags are those of redlock-bench where
// they mean the same (--nodes, --workers, --duration, --warmup, --ttl, --label, --run),
// so bench/compare runs all benches with one set of words.

#include <chrono>
#include <string>
#include <vector>

namespace redlock_limit {

struct LimitOptions {
  std::vector<std::string> nodes;  ///< host:port or redis://host:port
  /// B, the cycles run in lockstep: the limit for B independent workers.
  int batch = 1;
  double duration_s = 5;
  double warmup_s = 1;
  std::chrono::milliseconds ttl{10'000};
  /// How long a node may stay silent before the run fails.
  std::chrono::milliseconds reply_timeout{1'000};
  std::string label;
  int run = 0;
};

/// Parses argv; prints help or a usage error and exits like CLI11 does.
LimitOptions parse_limit_options(int argc, char** argv);

}  // namespace redlock_limit

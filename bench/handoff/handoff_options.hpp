#pragma once
// The command line of redlock-handoff-bench, in redlock-bench's words where they mean
// the same (--workers, --duration, --warmup, --label, --run), so bench/compare runs it
// like the other benches.

#include <string>

namespace redlock_handoff {

struct HandoffOptions {
  int workers = 1;
  double duration_s = 3;
  double warmup_s = 1;
  std::string label;
  int run = 0;
};

/// Parses argv; prints help or a usage error and exits like CLI11 does.
HandoffOptions parse_handoff_options(int argc, char** argv);

}  // namespace redlock_handoff

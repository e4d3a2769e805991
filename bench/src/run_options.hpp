#pragma once
// The options every bench tool takes with the same meaning, so that bench/compare passes
// them alike and their JSON lines join in one report.

#include <CLI/CLI.hpp>
#include <string>

namespace redlock_bench {

/// --duration (measured seconds) and --warmup (unmeasured seconds before the window).
inline void add_window_options(CLI::App& app, double& duration_s, double& warmup_s) {
  app.add_option("--duration", duration_s, "Measured seconds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--warmup", warmup_s, "Unmeasured seconds before the window")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
}

/// --label and --run, copied into the output.
inline void add_run_options(CLI::App& app, std::string& label, int& run) {
  app.add_option("--label", label, "Copied into the output");
  app.add_option("--run", run, "Run index, copied into the output");
}

}  // namespace redlock_bench

#include "handoff_report.hpp"

#include <nlohmann/json.hpp>

#include "json_fields.hpp"

namespace redlock_handoff {

using nlohmann::ordered_json;
using redlock_bench::round_to;

namespace {

// Two places: a handoff costs a few µs, and one place would blur the ratios the report
// draws from it.
ordered_json per_handoff(double amount, std::uint64_t handoffs) {
  if (handoffs == 0) return nullptr;
  return round_to(amount / double(handoffs), 2);
}

}  // namespace

std::string handoff_report_line(const HandoffRun& run) {
  const HandoffOptions& options = *run.options;
  const double elapsed = run.elapsed_s;
  const std::uint64_t handoffs = run.cycles * handoffs_per_cycle;

  ordered_json out;
  out["schema"] = "redlock-bench/v1";
  out["bench"] = "redlock-handoff-bench";
  out["lib"] = "redlock handoff";
  out["lib_version"] = REDLOCK_BENCH_LIB_VERSION;
  out["runtime"] =
      "C++20, the library's LoopThread::post and a sem_t wait, no I/O; a cycle is two handoffs, "
      "as lock() then unlock() of the synchronous API";
  out["driver"] = "W threads, each posting an empty task to one loop thread and waiting for it";
  out["label"] = options.label;
  out["run"] = options.run;
  out["workers"] = options.workers;
  out["elapsed_s"] = round_to(elapsed, 3);
  out["handoffs"] = handoffs;
  out["cycles"] = run.cycles;
  out["handoffs_per_cycle"] = handoffs_per_cycle;
  // ops_per_s counts handoffs here, not cycles as in the other benches' lines.
  out["ops_per_s"] = round_to(double(handoffs) / elapsed, 1);
  out["cycles_per_s"] = round_to(double(run.cycles) / elapsed, 1);
  out["cpu_us_per_handoff"] = {
      {"user", per_handoff(run.usage.user_us, handoffs)},
      {"system", per_handoff(run.usage.system_us, handoffs)},
      {"total", per_handoff(run.usage.user_us + run.usage.system_us, handoffs)}};
  redlock_bench::add_client_cost(out, run.usage, run.rss_start_mb, run.rss_end_mb, run.cycles,
                                 run.cycles, elapsed);
  // Nothing here can fail and be retried: an attempt would only repeat the cycle.
  out.erase("cpu_us_per_attempt");
  out["host"] = redlock_bench::host_json();
  out["ts"] = redlock_bench::iso_now();
  return out.dump();
}

}  // namespace redlock_handoff

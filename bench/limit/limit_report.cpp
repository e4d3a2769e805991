#include "limit_report.hpp"

#include <nlohmann/json.hpp>

#include "json_fields.hpp"

namespace redlock_limit {

using nlohmann::ordered_json;
using redlock_bench::latency_json;
using redlock_bench::per;
using redlock_bench::round_to;

double granted_ratio(const LimitRun& run) {
  return run.replies == 0 ? 0.0 : double(run.granted_replies) / double(run.replies);
}

std::string limit_report_line(LimitRun& run) {
  const LimitOptions& options = *run.options;
  const double elapsed = run.elapsed_s;

  ordered_json out;
  out["schema"] = "redlock-bench/v1";
  out["bench"] = "redlock-fanout-limit";
  out["lib"] = "fanout limit";
  out["lib_version"] = REDLOCK_BENCH_LIB_VERSION;
  out["runtime"] = "C++20, one thread, bare sockets";
  out["driver"] = "B cycles in lockstep, one write per node and phase";
  out["label"] = options.label;
  out["run"] = options.run;
  out["mode"] = "distinct";
  out["permits"] = nullptr;
  out["keys_per_lock"] = 1;
  // B cycles in lockstep stand for B workers: the limit of a client with that many.
  out["workers"] = options.batch;
  out["nodes"] = options.nodes.size();
  out["quorum"] = run.quorum;
  out["paused_nodes"] = 0;
  out["client_stall_ms"] = 0;
  out["ttl_ms"] = options.ttl.count();
  out["retry_count"] = 0;
  out["wait_ms"] = 0;
  out["command_timeout_ms"] = nullptr;
  out["node_timeout_ms"] = options.reply_timeout.count();
  out["op_timeout_ms"] = nullptr;
  out["auto_pipeline"] = true;
  out["elapsed_s"] = round_to(elapsed, 3);
  out["attempts"] = run.attempts;
  out["cycles"] = run.cycles;
  out["failures"] = run.failures;
  out["acquire_timeouts"] = 0;
  out["release_failures"] = run.release_failures;
  out["release_timeouts"] = 0;
  out["in_flight_at_end"] = 0;
  ordered_json kinds = ordered_json::object();
  if (run.error_replies > 0) kinds["error_reply"] = run.error_replies;
  out["error_kinds"] = kinds;
  out["ops_per_s"] = round_to(double(run.cycles) / elapsed, 1);
  out["attempts_per_s"] = round_to(double(run.attempts) / elapsed, 1);
  // Lockstep gives every slot the same number of cycles.
  out["cycles_per_worker"] = nullptr;
  out["acquire_ms"] = latency_json(run.acquire);
  out["acquire_fail_ms"] = latency_json(run.acquire_fail);
  out["release_ms"] = latency_json(run.release);
  out["cycle_ms"] = latency_json(run.cycle);
  add_client_cost(out, run.usage, run.rss_start_mb, run.rss_end_mb, run.cycles, run.attempts,
                  elapsed);
  if (run.redis) {
    out["redis_cpu_us_per_cycle"] = per(run.redis->cpu_us, run.cycles);
    out["redis_cpu_us_per_attempt"] = per(run.redis->cpu_us, run.attempts);
    out["redis_commands_per_cycle"] = per(run.redis->commands, run.cycles);
    out["redis_reads_per_cycle"] = per(run.redis->reads, run.cycles);
    out["redis_reconnects"] = run.redis->connections;
  } else {
    out["redis_cpu_us_per_cycle"] = nullptr;
    out["redis_cpu_us_per_attempt"] = nullptr;
    out["redis_commands_per_cycle"] = nullptr;
    out["redis_reads_per_cycle"] = nullptr;
    out["redis_reconnects"] = nullptr;
  }
  out["granted_reply_ratio"] = round_to(granted_ratio(run), 4);
  out["host"] = redlock_bench::host_json();
  out["ts"] = redlock_bench::iso_now();
  return out.dump();
}

}  // namespace redlock_limit

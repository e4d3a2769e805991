#include "report.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "json_fields.hpp"

namespace redlock_bench {

namespace {

using nlohmann::ordered_json;

// min and max cycles of one worker, and Jain's fairness index (1 = every worker got the
// same share, 1/W = one worker got everything).
ordered_json worker_share(const std::vector<std::uint64_t>& cycles) {
  if (cycles.empty()) return nullptr;
  double sum = 0;
  double squares = 0;
  for (auto c : cycles) {
    sum += double(c);
    squares += double(c) * double(c);
  }
  const auto [min, max] = std::minmax_element(cycles.begin(), cycles.end());
  return ordered_json{
      {"min", *min},
      {"max", *max},
      {"fairness", squares > 0
                       ? ordered_json(round_to(sum * sum / (double(cycles.size()) * squares), 3))
                       : ordered_json(nullptr)}};
}

}  // namespace

std::string report_line(RunFacts facts) {
  const Config& config = *facts.config;
  Tally& tally = facts.tally;
  const double elapsed = facts.elapsed_s;
  const bool threads = config.driver == DriverKind::threads;

  ordered_json kinds = ordered_json::object();
  for (const auto& [kind, count] : tally.error_kinds) kinds[kind] = count;

  ordered_json out;
  out["schema"] = "redlock-bench/v1";
  out["bench"] = "redlock-bench";
  out["lib"] = threads ? "redlock-cpp" : "redlock-cpp async";
  out["lib_version"] = REDLOCK_BENCH_LIB_VERSION;
  out["runtime"] = threads ? "C++20, " + std::to_string(config.workers) + " threads (sync API)"
                           : std::string("C++20, lock_async on the loop thread");
  out["driver"] = "libuv + hiredis reader (own connection layer)";
  out["label"] = config.label;
  out["observer"] = config.observer;
  out["sync_calls"] = config.sync_calls == redlock::SyncCalls::lead ? "lead" : "hand_off";
  out["run"] = config.run;
  out["mode"] = to_string(config.mode);
  // Beyond the shared schema: the other kinds' parameters (null or 1 where they do not
  // apply), so a line states what was locked.
  out["permits"] = config.mode == Mode::permits ? ordered_json(config.permits) : nullptr;
  out["keys_per_lock"] = config.mode == Mode::keys ? config.keys_per_lock : 1;
  out["workers"] = config.workers;
  out["nodes"] = config.nodes.size();
  out["quorum"] = facts.quorum;
  out["paused_nodes"] = config.pause;
  out["client_stall_ms"] = config.stall.count();
  out["ttl_ms"] = config.ttl.count();
  out["retry_count"] = config.retry_count;
  out["wait_ms"] = config.wait.count();
  out["command_timeout_ms"] = config.node_timeout.count() > 0
                                  ? ordered_json(config.node_timeout.count())
                                  : ordered_json(nullptr);
  out["node_timeout_ms"] = facts.effective_node_timeout_ms;
  out["op_timeout_ms"] = nullptr;
  out["auto_pipeline"] = true;
  out["elapsed_s"] = round_to(elapsed, 3);
  out["attempts"] = tally.attempts;
  out["cycles"] = tally.cycles;
  out["failures"] = tally.failures;
  out["acquire_timeouts"] = 0;
  out["release_failures"] = tally.release_failures;
  out["release_timeouts"] = 0;
  out["in_flight_at_end"] = facts.in_flight_at_end;
  out["error_kinds"] = kinds;
  out["ops_per_s"] = round_to(double(tally.cycles) / elapsed, 1);
  out["attempts_per_s"] = round_to(double(tally.attempts) / elapsed, 1);
  out["cycles_per_worker"] = worker_share(tally.cycles_by_worker);
  out["acquire_ms"] = latency_json(tally.acquire_ok);
  out["acquire_fail_ms"] = latency_json(tally.acquire_fail);
  out["release_ms"] = latency_json(tally.release);
  out["cycle_ms"] = latency_json(tally.cycle);
  add_client_cost(out, facts.usage, facts.rss_start_mb, facts.rss_end_mb, tally.cycles,
                  tally.attempts, elapsed);
  out["bench_samples_mb"] = round_to(double(tally.sample_bytes()) / (1024.0 * 1024.0), 1);
  // Per-cycle server costs only when every node is counted, as in the shared schema.
  if (facts.redis && config.pause == 0) {
    out["redis_cpu_us_per_cycle"] = per(facts.redis->cpu_us, tally.cycles);
    out["redis_cpu_us_per_attempt"] = per(facts.redis->cpu_us, tally.attempts);
    out["redis_commands_per_cycle"] = per(facts.redis->commands, tally.cycles);
    out["redis_reads_per_cycle"] = per(facts.redis->reads, tally.cycles);
  } else {
    out["redis_cpu_us_per_cycle"] = nullptr;
    out["redis_cpu_us_per_attempt"] = nullptr;
    out["redis_commands_per_cycle"] = nullptr;
    out["redis_reads_per_cycle"] = nullptr;
  }
  // New connections the (unpaused) nodes accepted inside the window: the client connects
  // before it, so each one is a reconnection after a dropped connection.
  out["redis_reconnects"] =
      facts.redis ? ordered_json(facts.redis->connections) : ordered_json(nullptr);
  if (!facts.all_workers_stopped) out["workers_not_stopped"] = true;
  out["host"] = host_json();
  out["ts"] = iso_now();
  return out.dump();
}

}  // namespace redlock_bench

#pragma once
// Fields that every bench line of the redlock-bench/v1 schema writes the same way
// (rounding, latency summaries, the host, the time stamp), shared by redlock-bench and
// redlock-fanout-limit so that their lines join in one report.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "latency.hpp"
#include "process_usage.hpp"

namespace redlock_bench {

/// `value` rounded to `decimals` places, so 6.3 prints as 6.3, not 6.300000000000001.
double round_to(double value, int decimals);
/// {n, p50, p90, p99, max, mean} in ms, nulls when there is no sample.
nlohmann::ordered_json latency_json(LatencySamples& samples);
/// amount / count to one decimal, null when nothing was counted.
nlohmann::ordered_json per(double amount, std::uint64_t count);
/// The client's own cost over the window, in the schema's order: cpu_us_per_cycle,
/// cpu_us_per_attempt, client_cpu_util, client_ctx_switches_per_cycle, client_rss_mb and
/// client_rss_growth_mb.
void add_client_cost(nlohmann::ordered_json& out, const ProcessUsage& usage, double rss_start_mb,
                     double rss_end_mb, std::uint64_t cycles, std::uint64_t attempts,
                     double elapsed_s);
/// {cpus, loadavg_1m, kernel}: what the run shared the machine with.
nlohmann::ordered_json host_json();
/// Now, UTC, ISO 8601 with milliseconds.
std::string iso_now();

}  // namespace redlock_bench

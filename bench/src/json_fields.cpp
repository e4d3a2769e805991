#include "json_fields.hpp"

#include <sys/utsname.h>

#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <thread>

namespace redlock_bench {

using nlohmann::ordered_json;

double round_to(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

ordered_json latency_json(LatencySamples& samples) {
  const auto summary = samples.summarize();
  auto field = [](const std::optional<double>& value) -> ordered_json {
    return value ? ordered_json(*value) : ordered_json(nullptr);
  };
  return ordered_json{{"n", summary.n},
                      {"p50", field(summary.p50)},
                      {"p90", field(summary.p90)},
                      {"p99", field(summary.p99)},
                      {"max", field(summary.max)},
                      {"mean", field(summary.mean)}};
}

ordered_json per(double amount, std::uint64_t count) {
  if (count == 0) return nullptr;
  return round_to(amount / double(count), 1);
}

ordered_json host_json() {
  double load = 0;
  std::ifstream("/proc/loadavg") >> load;
  utsname names{};
  ::uname(&names);
  return ordered_json{{"cpus", std::thread::hardware_concurrency()},
                      {"loadavg_1m", round_to(load, 2)},
                      {"kernel", names.release}};
}

std::string iso_now() {
  char text[32];
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  tm utc{};
  ::gmtime_r(&now.tv_sec, &utc);
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  char millis[24];
  std::snprintf(millis, sizeof millis, ".%03ldZ", now.tv_nsec / 1'000'000);
  return std::string(text) + millis;
}

void add_client_cost(nlohmann::ordered_json& out, const ProcessUsage& usage, double rss_start_mb,
                     double rss_end_mb, std::uint64_t cycles, std::uint64_t attempts,
                     double elapsed_s) {
  const double cpu_total = usage.user_us + usage.system_us;
  out["cpu_us_per_cycle"] = {{"user", per(usage.user_us, cycles)},
                             {"system", per(usage.system_us, cycles)},
                             {"total", per(cpu_total, cycles)}};
  out["cpu_us_per_attempt"] = {{"total", per(cpu_total, attempts)}};
  out["client_cpu_util"] = round_to(cpu_total / 1e6 / elapsed_s, 3);
  out["client_ctx_switches_per_cycle"] = {
      {"voluntary", per(double(usage.voluntary_switches), cycles)},
      {"involuntary", per(double(usage.involuntary_switches), cycles)}};
  out["client_rss_mb"] = round_to(rss_end_mb, 1);
  out["client_rss_growth_mb"] = round_to(rss_end_mb - rss_start_mb, 1);
}

}  // namespace redlock_bench

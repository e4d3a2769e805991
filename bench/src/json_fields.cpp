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

}  // namespace redlock_bench

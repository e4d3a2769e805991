// redlock-bench: acquire+release cycles against N Redis masters through the library's
// public API; one redlock-bench/v1 JSON line per run on stdout, diagnostics on stderr.

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <random>
#include <thread>

#include <redlock/redlock.hpp>

#include "client_stall.hpp"
#include "config.hpp"
#include "driver.hpp"
#include "node_pauser.hpp"
#include "process_usage.hpp"
#include "redis_admin.hpp"
#include "report.hpp"
#include "series.hpp"
#include "window.hpp"

namespace redlock_bench {

namespace {

using std::chrono::milliseconds;

// A URL naming one server (redis://, rediss://, unix://), not a Sentinel group or a
// cluster.
bool is_server(const std::string& url) {
  return url.rfind("redis://", 0) == 0 || url.rfind("rediss://", 0) == 0 ||
         url.rfind("unix://", 0) == 0;
}

std::string run_id() {
  std::random_device random;
  char text[16];
  std::snprintf(text, sizeof text, "%08x", random());
  return text;
}

void sleep_seconds(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

ProcessUsage minus(const ProcessUsage& end, const ProcessUsage& start) {
  return {end.user_us - start.user_us, end.system_us - start.system_us,
          end.voluntary_switches - start.voluntary_switches,
          end.involuntary_switches - start.involuntary_switches};
}

NodeCounters minus(const NodeCounters& end, const NodeCounters& start) {
  return {end.cpu_us - start.cpu_us, end.commands - start.commands, end.reads - start.reads,
          end.connections - start.connections};
}

// Counts what it is told and nothing else: an observer as cheap as one can be, so that a
// run with it measures the library's side of observing.
class CountingObserver final : public redlock::Observer {
 public:
  void on_attempt(const redlock::AttemptEvent&) override { ++events_; }
  void on_acquire(const redlock::AcquireEvent&) override { ++events_; }
  void on_wake(const redlock::WakeEvent&) override { ++events_; }
  void on_lock(const redlock::LockEvent&) override { ++events_; }
  void on_watchdog(const redlock::WatchdogEvent&) override { ++events_; }
  void on_node(const redlock::NodeEvent&) override { ++events_; }

 private:
  std::atomic<std::uint64_t> events_{0};
};

redlock::LockOptions lock_options(const Config& config, const redlock::Options& client_options) {
  redlock::LockOptions options;
  options.ttl = config.ttl;
  options.wait = config.wait;
  if (config.retry_count > 0) {
    options.max_attempts = config.retry_count + 1;
    if (options.wait.count() == 0) {
      options.wait =
          (client_options.retry_delay + client_options.retry_jitter) * (config.retry_count + 1);
    }
  }
  return options;
}

/// What each worker locks: its own key (distinct), its own M keys (keys), or one key
/// shared by all (hot, shared, permits).
std::vector<std::vector<std::string>> keys_of(const Config& config, const std::string& id) {
  std::vector<std::vector<std::string>> keys;
  for (int i = 0; i < config.workers; ++i) {
    const auto own = "bench:" + id + ":w" + std::to_string(i);
    switch (config.mode) {
      case Mode::distinct:
        keys.push_back({own});
        break;
      case Mode::keys:
        keys.emplace_back();
        for (int k = 0; k < config.keys_per_lock; ++k) {
          keys.back().push_back(own + ":k" + std::to_string(k));
        }
        break;
      case Mode::hot:
      case Mode::shared:
      case Mode::permits:
        keys.push_back({"bench:" + id + ":" + to_string(config.mode)});
        break;
    }
  }
  return keys;
}

int run(const Config& config) {
  const auto keys = keys_of(config, run_id());

  // The server counters need one server per member: a Sentinel group or a cluster spreads
  // a member over several (bench/cluster reads theirs itself), so then none are read.
  std::vector<std::unique_ptr<RedisAdmin>> admins;
  const bool one_server_each = std::all_of(config.nodes.begin(), config.nodes.end(), is_server);
  if (one_server_each) {
    for (const auto& node : config.nodes) admins.push_back(std::make_unique<RedisAdmin>(node));
  }
  std::vector<pid_t> pids = config.pids;
  if (config.pause > 0 && pids.empty()) {
    if (!one_server_each) {
      std::fprintf(stderr, "redlock-bench: --pause on Sentinel or cluster members needs --pids\n");
      return 2;
    }
    for (auto& admin : admins) pids.push_back(admin->pid());
  }

  redlock::Options options;
  options.nodes = config.nodes;
  options.node_timeout = config.node_timeout;
  options.sync_calls = config.sync_calls;
  if (config.observer) options.observer = std::make_shared<CountingObserver>();
  std::shared_ptr<SeriesObserver> series;
  if (config.series.count() > 0) {
    series = std::make_shared<SeriesObserver>(config.series, config.nodes);
    options.observer = series;
  }
  std::optional<FaultRunner> fault;
  if (!config.fault_command.empty()) fault.emplace(config.fault_command, config.fault_at);
  options.member_guard.replicas_to_ack = config.replicas_to_ack;
  options.member_guard.observed_restarts = config.observed_restarts;
  auto client = redlock::Client::create(options);
  // Options::node_timeout's documented default, reported so a run states its deadline.
  const auto effective_node_timeout = config.node_timeout.count() > 0
                                          ? config.node_timeout
                                          : std::min(milliseconds(50), config.ttl / 10);

  Window window(config.ops);
  Workload workload{
      client.get(), &window, config.mode, config.permits, lock_options(config, options), keys};
  auto driver = config.driver == DriverKind::threads ? make_threads_driver(std::move(workload))
                                                     : make_async_driver(std::move(workload));
  NodePauser pauser;
  driver->start();
  sleep_seconds(config.warmup_s);

  if (config.pause > 0) pauser.pause({pids.begin(), pids.begin() + config.pause});

  // Paused nodes cannot answer INFO; the others are still counted, so a fault run shows
  // the healthy nodes' reconnections.
  const auto unpaused = static_cast<std::size_t>(config.pause);
  const auto redis_start = sum_counters(admins, unpaused);
  const double rss_start = resident_mb();
  const auto usage_start = process_usage();
  const auto wall_start = Clock::now();
  if (series) series->start(wall_start);
  if (fault) fault->start(wall_start);
  window.open();
  if (window.fixed_ops()) {
    window.wait_for_ops(std::chrono::minutes(10));
  } else if (config.stall.count() > 0) {
    sleep_seconds(config.duration_s / 2);
    stall_this_process(config.stall);
    sleep_seconds(config.duration_s / 2);
  } else {
    sleep_seconds(config.duration_s);
  }
  window.close();
  const auto wall_end = Clock::now();
  const auto usage_end = process_usage();
  const double rss_end = resident_mb();

  // A synchronous call that outlived every deadline the library promises is "blocked"
  // (the harness' in_flight_at_end); operations merely in progress at the edge are not.
  const auto promised = config.wait + effective_node_timeout * 2 + std::chrono::seconds(1);
  RunFacts facts;
  facts.in_flight_at_end = driver->busy_since_before(wall_end - promised);
  const auto redis_end = sum_counters(admins, unpaused);
  pauser.resume();

  const bool stopped = driver->stop(promised + std::chrono::seconds(5));
  facts.all_workers_stopped = stopped;
  facts.config = &config;
  facts.quorum = client->quorum();
  if (config.mode == Mode::permits) {
    if (auto semaphore = client->semaphore_quorum(config.permits)) facts.quorum = *semaphore;
  }
  facts.effective_node_timeout_ms = effective_node_timeout.count();
  facts.elapsed_s = std::chrono::duration<double>(wall_end - wall_start).count();
  facts.tally = driver->collect();
  facts.usage = minus(usage_end, usage_start);
  facts.rss_start_mb = rss_start;
  facts.rss_end_mb = rss_end;
  if (one_server_each && redis_start && redis_end) facts.redis = minus(*redis_end, *redis_start);
  if (series || fault) {
    auto line = nlohmann::ordered_json::parse(report_line(std::move(facts)));
    if (series) line["series"] = series->report(wall_end);
    if (fault) line["fault"] = fault->finish();
    std::cout << line.dump() << std::endl;
  } else {
    std::cout << report_line(std::move(facts)) << std::endl;
  }

  if (!stopped) {
    // A worker is stuck inside the library: tearing the client down under it would only
    // add a crash to the report already printed.
    std::fprintf(stderr, "redlock-bench: some workers did not stop; exiting without cleanup\n");
    std::_Exit(3);
  }
  std::vector<std::string> every_key;
  for (const auto& mine : keys) every_key.insert(every_key.end(), mine.begin(), mine.end());
  for (auto& admin : admins) {
    try {
      admin->del(every_key);
    } catch (const std::exception&) {
    }
  }
  driver.reset();
  client->close();
  return 0;
}

}  // namespace

}  // namespace redlock_bench

int main(int argc, char** argv) {
  const auto config = redlock_bench::parse_command_line(argc, argv);
  try {
    return redlock_bench::run(config);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "redlock-bench: %s\n", error.what());
    return 1;
  }
}

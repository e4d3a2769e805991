#include "config.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "run_options.hpp"

namespace redlock_bench {

namespace {

// The peers' harness passes bare host:port pairs; the library wants URLs.
std::string as_url(std::string node) {
  if (node.find("://") == std::string::npos) node = "redis://" + node;
  return node;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream stream(text);
  std::string item;
  while (std::getline(stream, item, ',')) {
    const auto first = item.find_first_not_of(" \t");
    const auto last = item.find_last_not_of(" \t");
    if (first != std::string::npos) items.push_back(item.substr(first, last - first + 1));
  }
  return items;
}

// The member URLs of --nodes. A Sentinel group's sentinels and a cluster's seeds are
// separated by commas too: a piece without a scheme continues such a URL (until a
// Sentinel URL's master name has begun), as the redlock CLI reads --nodes.
std::vector<std::string> split_members(const std::string& text) {
  std::vector<std::string> members;
  for (auto& piece : split_list(text)) {
    const bool bare = piece.find("://") == std::string::npos;
    if (bare && !members.empty()) {
      const std::string& last = members.back();
      const auto scheme = last.substr(0, last.find("://"));
      const bool cluster = scheme == "redis-cluster" || scheme == "rediss-cluster";
      const bool sentinel = (scheme == "redis-sentinel" || scheme == "rediss-sentinel") &&
                            last.find('/', scheme.size() + 3) == std::string::npos;
      if (cluster || sentinel) {
        members.back() += "," + piece;
        continue;
      }
    }
    members.push_back(as_url(piece));
  }
  return members;
}

}  // namespace

const char* to_string(Mode mode) {
  switch (mode) {
    case Mode::distinct:
      return "distinct";
    case Mode::hot:
      return "hot";
    case Mode::shared:
      return "shared";
    case Mode::permits:
      return "permits";
    case Mode::keys:
      return "keys";
  }
  return "distinct";
}
const char* to_string(DriverKind driver) {
  return driver == DriverKind::threads ? "threads" : "async";
}

Config parse_command_line(int argc, char** argv) {
  Config config;
  CLI::App app{
      "redlock-bench: acquire+release cycles of the redlock library against N Redis masters.\n"
      "Prints one redlock-bench/v1 JSON line per run on stdout."};
  app.get_formatter()->column_width(34);

  std::string nodes;
  if (const char* env = std::getenv("REDLOCK_NODES")) nodes = env;
  if (nodes.empty()) {
    nodes = "127.0.0.1:7101,127.0.0.1:7102,127.0.0.1:7103,127.0.0.1:7104,127.0.0.1:7105";
  }
  app.add_option("--nodes", nodes,
                 "Comma-separated node URLs or host:port pairs (default: $REDLOCK_NODES, else "
                 "127.0.0.1:7101..7105)");

  std::string mode = "distinct";
  app.add_option("--mode", mode,
                 "distinct (a key per worker), hot (one key for all), shared (every worker a "
                 "reader of one read-write lock), permits (every worker after one of --permits "
                 "permits of one semaphore), keys (each worker locks its own --keys keys as one)")
      ->check(CLI::IsMember({"distinct", "hot", "shared", "permits", "keys"}))
      ->capture_default_str();
  auto* permits = app.add_option("--permits", config.permits, "K, the permits of --mode permits")
                      ->check(CLI::Range(1, 100000))
                      ->capture_default_str();
  auto* keys_per_lock =
      app.add_option("--keys", config.keys_per_lock, "M, the keys of each lock in --mode keys")
          ->check(CLI::Range(1, 1000))
          ->capture_default_str();
  std::string driver = "threads";
  app.add_option("--driver", driver,
                 "threads: W threads, each lock() then unlock(); async: one thread drives W "
                 "lock_async() chains, each awaiting its unlock_async() before the next attempt")
      ->check(CLI::IsMember({"threads", "async"}))
      ->capture_default_str();
  std::string sync_calls = "lead";
  app.add_option("--sync-calls", sync_calls,
                 "Options::sync_calls of --driver threads: lead (a caller that finds the client "
                 "idle runs its loop) or hand_off (every call posted to the loop thread)")
      ->check(CLI::IsMember({"lead", "hand_off"}))
      ->capture_default_str();
  app.add_option("--workers,-w", config.workers, "Concurrent workers")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  redlock_bench::add_window_options(app, config.duration_s, config.warmup_s);
  std::uint64_t ops = 0;
  auto* ops_option = app.add_option(
      "--ops", ops, "Instead of --duration: start N attempts in the window, wait for all");
  auto* cycles_option =
      app.add_option("--cycles", ops,
                     "Same as --ops (in distinct mode every attempt is a cycle); a fixed amount "
                     "of work, e.g. for an instruction count under callgrind");
  ops_option->excludes(cycles_option);

  long long ttl_ms = config.ttl.count();
  app.add_option("--ttl", ttl_ms, "Lock TTL, ms")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  long long wait_ms = 0;
  app.add_option("--wait", wait_ms,
                 "LockOptions::wait, ms: keep trying while the lock is held (0 = one attempt)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_option("--retry-count", config.retry_count,
                 "Extra attempts while held (like node-redlock's retryCount); implies a wait of "
                 "retry-count x (retry_delay + jitter) unless --wait is given")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  long long node_timeout_ms = 0;
  auto* node_timeout =
      app.add_option("--node-timeout", node_timeout_ms,
                     "Options::node_timeout, ms (0 = the library default, min(50 ms, ttl/10))");
  app.add_option("--command-timeout", node_timeout_ms, "Alias of --node-timeout (harness contract)")
      ->excludes(node_timeout)
      ->check(CLI::NonNegativeNumber);
  node_timeout->check(CLI::NonNegativeNumber);

  app.add_flag("--observer", config.observer,
               "Set Options::observer to one that counts every event (what observing costs; "
               "without it no observer is set)");
  app.add_option("--replicas-to-ack", config.replicas_to_ack,
                 "Options::member_guard.replicas_to_ack: WAIT R behind every grant, counted "
                 "only when R replicas acknowledged it (0 = off)")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("--observed-restarts", config.observed_restarts,
                 "Options::member_guard.observed_restarts: guard a member seen to restart or "
                 "fail over (false: the restart rule off, what it costs)")
      ->capture_default_str();
  app.add_option("--pause", config.pause,
                 "SIGSTOP the first K nodes after the warm-up, SIGCONT them at the end")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  long long stall_ms = 0;
  app.add_option("--stall", stall_ms,
                 "SIGSTOP this process for MS in the middle of the window (a client pause "
                 "while the nodes keep answering)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  std::string pids;
  app.add_option("--pids", pids,
                 "Comma-separated pids of the nodes in node order (default: each node's INFO "
                 "server process_id)");
  long long series_ms = 0;
  app.add_option("--series", series_ms,
                 "Record acquisitions, failures and each member's answers per window of MS "
                 "(a \"series\" object in the JSON line; sets an observer, so not with "
                 "--observer)")
      ->check(CLI::NonNegativeNumber);
  double fault_at_s = 0;
  auto* fault_command =
      app.add_option("--fault-command", config.fault_command,
                     "Shell command run --fault-at seconds after the window opened (e.g. "
                     "redis-cli -p 26379 sentinel failover name); a \"fault\" object in the "
                     "JSON line says when it started and ended");
  app.add_option("--fault-at", fault_at_s, "Seconds into the window for --fault-command")
      ->check(CLI::NonNegativeNumber)
      ->needs(fault_command);
  redlock_bench::add_run_options(app, config.label, config.run);
  // Accepted so the peers' harness can pass its full command line; they do not apply to a
  // client with per-node deadlines of its own.
  std::string ignored_text;
  double ignored_number = 0;
  app.add_option("--lib", ignored_text, "Ignored (harness contract)")->group("");
  app.add_option("--op-timeout", ignored_number, "Ignored (harness contract)")->group("");
  app.add_option("--auto-pipeline", ignored_number,
                 "Ignored: commands of one loop turn always share one write per node")
      ->group("");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    std::exit(app.exit(error));
  }

  config.nodes = split_members(nodes);
  if (config.nodes.empty()) {
    std::fprintf(stderr, "redlock-bench: --nodes: no node given\n");
    std::exit(2);
  }
  for (auto each : {Mode::distinct, Mode::hot, Mode::shared, Mode::permits, Mode::keys}) {
    if (mode == to_string(each)) config.mode = each;
  }
  if (*permits && config.mode != Mode::permits) {
    std::fprintf(stderr, "redlock-bench: --permits needs --mode permits\n");
    std::exit(2);
  }
  if (*keys_per_lock && config.mode != Mode::keys) {
    std::fprintf(stderr, "redlock-bench: --keys needs --mode keys\n");
    std::exit(2);
  }
  config.driver = driver == "async" ? DriverKind::async : DriverKind::threads;
  config.sync_calls =
      sync_calls == "hand_off" ? redlock::SyncCalls::hand_off : redlock::SyncCalls::lead;
  if (*ops_option || *cycles_option) config.ops = ops;
  config.ttl = std::chrono::milliseconds(ttl_ms);
  config.wait = std::chrono::milliseconds(wait_ms);
  config.node_timeout = std::chrono::milliseconds(node_timeout_ms);
  config.stall = std::chrono::milliseconds(stall_ms);
  config.series = std::chrono::milliseconds(series_ms);
  config.fault_at = std::chrono::milliseconds(static_cast<long long>(fault_at_s * 1000));
  if (config.series.count() > 0 && config.observer) {
    std::fprintf(stderr, "redlock-bench: --series sets its own observer; drop --observer\n");
    std::exit(2);
  }
  if (config.pause > static_cast<int>(config.nodes.size())) {
    std::fprintf(stderr, "redlock-bench: --pause %d: only %zu nodes\n", config.pause,
                 config.nodes.size());
    std::exit(2);
  }
  for (const auto& pid : split_list(pids))
    config.pids.push_back(static_cast<pid_t>(std::stol(pid)));
  if (!config.pids.empty() && config.pids.size() != config.nodes.size()) {
    std::fprintf(stderr, "redlock-bench: --pids: %zu pids for %zu nodes\n", config.pids.size(),
                 config.nodes.size());
    std::exit(2);
  }
  return config;
}

}  // namespace redlock_bench

#pragma once
// What one benchmark run does: the command line of redlock-bench, parsed and checked.
// The flags follow the redlock-bench/v1 contract, so the same command line drives this
// bench and the node-redlock one.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <redlock/options.hpp>

namespace redlock_bench {

/// distinct: a key per worker; hot: one key for all. The other kinds: shared, every
/// worker a reader of one read-write lock; permits, every worker after one of K permits
/// of one semaphore; keys, every worker locking its own M keys as one (lock_all).
enum class Mode { distinct, hot, shared, permits, keys };
enum class DriverKind { threads, async };

struct Config {
  std::vector<std::string>
      nodes;  ///< member URLs (redis://, redis-sentinel://, redis-cluster://, ...)
  Mode mode = Mode::distinct;
  /// --mode permits: K, the semaphore's permits.
  int permits = 2;
  /// --mode keys: M, the keys each lock_all() takes.
  int keys_per_lock = 3;
  DriverKind driver = DriverKind::threads;
  int workers = 1;
  double duration_s = 5;
  double warmup_s = 1;
  /// Attempts started inside the window; the window ends when they all completed.
  std::optional<std::uint64_t> ops;
  std::chrono::milliseconds ttl{10'000};
  /// LockOptions::wait: 0 = one attempt, a lost race is a failure.
  std::chrono::milliseconds wait{0};
  int retry_count = 0;
  /// Options::node_timeout; 0 = the library's default (min(50 ms, ttl / 10)).
  std::chrono::milliseconds node_timeout{0};
  int pause = 0;
  /// Stop the bench process itself this long in the middle of the window (0 = never).
  std::chrono::milliseconds stall{0};
  /// Pids of the nodes, in node order; empty = ask each node (INFO server).
  std::vector<pid_t> pids;
  /// Options::observer set to one that counts every event: the cost of being observed.
  bool observer = false;
  /// Options::sync_calls (the synchronous calls of --driver threads).
  redlock::SyncCalls sync_calls = redlock::SyncCalls::lead;
  /// Options::member_guard.replicas_to_ack: WAIT R behind every grant (0: none).
  int replicas_to_ack = 0;
  /// Options::member_guard.observed_restarts (the restart rule; on by default).
  bool observed_restarts = true;
  /// --series: record acquisitions, failures and each member's answers per window of
  /// this length (0 = off); sets Options::observer.
  std::chrono::milliseconds series{0};
  /// --fault-command, run by the shell --fault-at after the window opened.
  std::string fault_command;
  std::chrono::milliseconds fault_at{0};
  std::string label;
  int run = 0;
};

/// Parses argv. Prints help or a usage error and exits like CLI11 does.
Config parse_command_line(int argc, char** argv);

const char* to_string(Mode mode);
const char* to_string(DriverKind driver);

}  // namespace redlock_bench

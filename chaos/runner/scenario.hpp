#pragma once
// A chaos scenario: the cluster it needs, the client load, and a schedule of faults.

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "runner/chaos_cluster.hpp"
#include "runner/worker_process.hpp"

namespace redlock::chaos {

using std::chrono::milliseconds;

/// The client load: `processes` workers x `threads` threads contending for `keys` keys of
/// each primitive.
struct WorkerSettings {
  int processes = 3;
  int threads = 4;
  int keys = 2;
  milliseconds ttl{1000};
  milliseconds wait{1000};
  milliseconds hold{20};
  /// Every Nth critical section of a thread stalls for 1.5 x ttl (0: never).
  int stall_every = 0;
  /// Threads per worker that lock like another Redlock library: never announcing.
  int foreign_threads = 0;
  /// What the threads take (the worker's --primitive): every member of the lock family,
  /// drawn anew for each critical section, unless a scenario needs one alone ("election":
  /// the threads are candidates of leader elections on `keys` election keys instead).
  std::string primitive = "mix";
  /// K of the semaphores.
  int permits = 2;
  /// TEST ONLY: permits granted by this many nodes, below the safe quorum (0: the safe
  /// one). Breaks the semaphore on purpose, to show the checker catching it.
  int unsafe_permit_quorum = 0;
  /// TEST ONLY: with primitive "election", campaigns granted by this many nodes, below a
  /// majority (0: Election itself). Plants two leaders at once for the checker to catch.
  int unsafe_election_quorum = 0;
  /// Nodes that worker process p cannot reach for the whole run (`unreachable[p]`): a
  /// partition that each client sees differently.
  std::vector<std::vector<std::size_t>> unreachable;
  /// Replicated nodes that worker process p reaches through their second proxy
  /// (`second_proxy[p]`, ChaosCluster::second_url): the clients that a split moves to the
  /// promoted replica while the others stay on the old master.
  std::vector<std::vector<std::size_t>> second_proxy;
  /// Every Nth exclusive lock of a thread is taken without fencing (0: none), so the
  /// unfenced acquire (a plain SET on Redis 7) meets the same faults as the fenced one.
  int unfenced_every = 2;
  /// Options::member_guard of the workers (observed restarts, bound = ttl): off only to
  /// show what a restart without persistence does without it.
  bool member_guard = true;
  /// Options::member_guard.replicas_to_ack of the workers (0: no WAIT).
  int replicas_to_ack = 0;
  /// Options::quorum of the workers (0: a majority).
  int quorum = 0;
  /// Options::member_guard.allow_two_masters of the workers: Sentinel group members with
  /// neither replicas_to_ack nor a quorum that absorbs a double vote.
  bool allow_two_masters = false;
};

/// What a scheduled action may act on.
struct ScenarioContext {
  ChaosCluster& cluster;
  std::vector<WorkerProcess>& workers;
  /// The workers' key prefix (their --prefix): a fault may aim at the shard of a key.
  std::string key_prefix;
};

struct Action {
  milliseconds at;   ///< from the start of the workers
  std::string what;  ///< logged as a "fault" record and shown on failure
  std::function<void(ScenarioContext&)> run;
};

struct Scenario {
  std::string name;
  std::string description;
  /// Inside the algorithm's assumptions: mutual exclusion and token order must hold.
  bool in_model = true;
  /// Out of model, and the checker must catch it (proof that the checker can fail).
  bool expect_violations = false;
  ClusterSettings cluster;
  WorkerSettings workers;
  /// The faults, for a run of the given duration. Actions run in time order.
  std::function<std::vector<Action>(milliseconds duration, const WorkerSettings& workers)> schedule;
  /// With expect_violations: the primitive (a checker/primitive.hpp name) whose rule the
  /// caught violations must include; empty for any.
  std::string expect_violations_of;
  /// In model, whether token order is too. False where a fault loses the nodes' fencing
  /// counters (a restart without persistence): the member guard restores exclusion, not
  /// the counters, so regressions are reported but do not fail the scenario; stale writes
  /// accepted still do.
  bool tokens_in_model = true;
};

/// Every scenario, in the order `all` runs them.
std::vector<Scenario> all_scenarios();

}  // namespace redlock::chaos

#include "core/semaphore_quorum.hpp"

#include <algorithm>

namespace redlock::core {

int semaphore_quorum(int nodes, int permits) noexcept {
  const long long n = nodes;
  const long long k = permits;
  return static_cast<int>(n * k / (k + 1) + 1);
}

int semaphore_fault_tolerance(int nodes, int permits) noexcept {
  return nodes - semaphore_quorum(nodes, permits);
}

long long nodes_for_semaphore(int permits, int failures) noexcept {
  return static_cast<long long>(failures) * (static_cast<long long>(permits) + 1) + 1;
}

std::optional<int> semaphore_quorum_for(int nodes, int permits, int configured, int client_quorum,
                                        std::string& problem) {
  if (permits < 1) {
    problem = "permits: must be >= 1, got " + std::to_string(permits);
    return std::nullopt;
  }
  const int safe = semaphore_quorum(nodes, permits);
  if (configured == 0) return std::max(safe, client_quorum);
  if (configured > nodes) {
    problem = "quorum: " + std::to_string(configured) + " is more than the " +
              std::to_string(nodes) + " nodes";
    return std::nullopt;
  }
  if (configured < safe) {
    problem = "quorum: " + std::to_string(configured) + " is unsafe for " +
              std::to_string(permits) + " permits on " + std::to_string(nodes) +
              " nodes: K+1 holders granted by q nodes each must share a node, which needs "
              "(K+1)*q > N*K, so q >= " +
              std::to_string(safe) + " (tolerating " +
              std::to_string(semaphore_fault_tolerance(nodes, permits)) +
              " failed nodes); tolerating one failed node with " + std::to_string(permits) +
              " permits needs at least " + std::to_string(nodes_for_semaphore(permits, 1)) +
              " nodes";
    return std::nullopt;
  }
  return configured;
}

}  // namespace redlock::core

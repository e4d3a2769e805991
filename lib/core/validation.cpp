#include "core/validation.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

namespace redlock::core {

namespace {

std::string ms(std::chrono::milliseconds value) {
  return std::to_string(value.count()) + " ms";
}

}  // namespace

int effective_quorum(int configured, int nodes) noexcept {
  return configured == 0 ? nodes / 2 + 1 : configured;
}

std::chrono::milliseconds effective_node_timeout(std::chrono::milliseconds configured,
                                                 std::chrono::milliseconds ttl) noexcept {
  if (configured.count() > 0) return configured;
  return std::clamp(ttl / 10, std::chrono::milliseconds(1), std::chrono::milliseconds(50));
}

std::optional<std::string> check_options(const Options& options,
                                         const std::vector<std::string>& identities) {
  const int n = static_cast<int>(options.nodes.size());
  if (n == 0) return "nodes: the node list is empty (give at least one redis:// URL)";
  std::unordered_map<std::string, std::size_t> first_seen;
  for (std::size_t i = 0; i < identities.size(); ++i) {
    auto [it, inserted] = first_seen.emplace(identities[i], i);
    if (!inserted) {
      return "nodes: duplicate node " + identities[i] + " (entries " +
             std::to_string(it->second + 1) + " and " + std::to_string(i + 1) +
             "); each node must be an independent master";
    }
  }
  const int majority = n / 2 + 1;
  if (options.quorum != 0 && (options.quorum < majority || options.quorum > n)) {
    return "quorum: " + std::to_string(options.quorum) + " is outside [" +
           std::to_string(majority) + ", " + std::to_string(n) + "] for " + std::to_string(n) +
           " nodes (below a majority two owners could hold the lock at once)";
  }
  if (options.node_timeout.count() < 0)
    return "node_timeout: must be >= 0, got " + ms(options.node_timeout);
  if (options.connect_timeout.count() <= 0)
    return "connect_timeout: must be > 0, got " + ms(options.connect_timeout);
  if (!(options.drift_factor >= 0.0 && options.drift_factor < 1.0))
    return "drift_factor: must be in [0, 1), got " + std::to_string(options.drift_factor);
  if (options.drift_margin.count() < 0)
    return "drift_margin: must be >= 0, got " + ms(options.drift_margin);
  if (options.retry_delay.count() < 0)
    return "retry_delay: must be >= 0, got " + ms(options.retry_delay);
  if (options.retry_jitter.count() < 0)
    return "retry_jitter: must be >= 0, got " + ms(options.retry_jitter);
  if (options.reconnect_min.count() <= 0 || options.reconnect_max < options.reconnect_min)
    return "reconnect_min/reconnect_max: need 0 < min <= max, got " + ms(options.reconnect_min) +
           " and " + ms(options.reconnect_max);
  if (options.max_pending_per_node == 0) return "max_pending_per_node: must be > 0";
  if (options.max_key_bytes == 0) return "max_key_bytes: must be > 0";
  if (options.member_guard.longest_ttl.count() < 0 || options.member_guard.longest_ttl > max_ttl) {
    return "member_guard.longest_ttl: must be in [0, " + ms(max_ttl) + "], got " +
           ms(options.member_guard.longest_ttl);
  }
  if (options.member_guard.replicas_to_ack < 0 || options.member_guard.replicas_to_ack > 1000) {
    return "member_guard.replicas_to_ack: must be in [0, 1000], got " +
           std::to_string(options.member_guard.replicas_to_ack);
  }
  return std::nullopt;
}

std::optional<std::string> check_key(std::string_view key, std::size_t max_key_bytes) {
  if (key.empty()) return "key: must not be empty";
  if (key.size() > max_key_bytes) {
    return "key: " + std::to_string(key.size()) + " bytes is longer than max_key_bytes (" +
           std::to_string(max_key_bytes) + ")";
  }
  return std::nullopt;
}

std::optional<std::string> check_ttl(std::chrono::milliseconds ttl,
                                     std::chrono::milliseconds configured_node_timeout) {
  if (ttl.count() <= 0) return "ttl: must be > 0, got " + ms(ttl);
  if (ttl > max_ttl) {
    return "ttl: " + ms(ttl) + " is longer than the longest supported (" + ms(max_ttl) +
           ", a year)";
  }
  const auto node_timeout = effective_node_timeout(configured_node_timeout, ttl);
  if (ttl <= 2 * node_timeout) {
    return "ttl: " + ms(ttl) + " must be longer than 2 x node_timeout (" + ms(node_timeout) +
           "), or no validity is left after one round";
  }
  return std::nullopt;
}

std::chrono::milliseconds watchdog_round_allowance(
    std::chrono::milliseconds node_timeout) noexcept {
  return node_timeout + std::max(std::chrono::milliseconds(2), node_timeout / 10);
}

std::optional<std::string> check_lock_options(const LockOptions& options,
                                              std::chrono::milliseconds configured_node_timeout,
                                              const DriftPolicy& drift_policy) {
  if (auto problem = check_ttl(options.ttl, configured_node_timeout)) return problem;
  if (options.on_lost && !options.auto_extend) {
    return "on_lost: set without auto_extend; it would never be called (only the watchdog "
           "of auto_extend can lose a lock)";
  }
  if (options.wait.count() < 0) return "wait: must be >= 0, got " + ms(options.wait);
  if (options.max_attempts < 0)
    return "max_attempts: must be >= 0, got " + std::to_string(options.max_attempts);
  if (options.extend_every.count() < 0)
    return "extend_every: must be >= 0, got " + ms(options.extend_every);
  if (options.auto_extend && options.extend_every >= options.ttl) {
    return "extend_every: " + ms(options.extend_every) + " must be shorter than ttl (" +
           ms(options.ttl) + ")";
  }
  if (options.auto_extend) {
    // After the slowest acquisition (every round up to node_timeout) the watchdog must
    // still be able to run one round and learn of its failure before the validity ends,
    // or on_lost could come too late.
    const auto node_timeout = effective_node_timeout(configured_node_timeout, options.ttl);
    const int rounds = options.fencing ? 2 : 1;
    const auto usable = options.ttl - std::chrono::ceil<std::chrono::milliseconds>(
                                          drift(options.ttl, drift_policy));
    const auto needed = rounds * node_timeout + watchdog_round_allowance(node_timeout);
    if (usable <= needed) {
      return "ttl: " + ms(options.ttl) + " is too short for auto_extend with node_timeout " +
             ms(node_timeout) + ": after " + std::to_string(rounds) +
             " acquire round(s) of up to node_timeout and the drift allowance, no time would "
             "be left to learn of a failed extension before the validity ends (needs ttl - "
             "drift > " +
             ms(needed) + "); use a longer ttl or a shorter node_timeout";
    }
  }
  if (options.max_hold.count() < 0) return "max_hold: must be >= 0, got " + ms(options.max_hold);
  if (options.max_extensions < 0)
    return "max_extensions: must be >= 0, got " + std::to_string(options.max_extensions);
  return std::nullopt;
}

}  // namespace redlock::core

#pragma once
// Input checks with messages that name the field and the bad value. Nothing is sent to
// any node before these pass, so a typo costs an error message, never a half-taken lock.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <redlock/options.hpp>

#include "core/validity.hpp"

namespace redlock::core {

/// The majority N/2+1 when `configured` is 0.
int effective_quorum(int configured, int nodes) noexcept;

/// Per-node deadline of one operation: the configured one, or min(50 ms, ttl/10) but
/// at least 1 ms.
std::chrono::milliseconds effective_node_timeout(std::chrono::milliseconds configured,
                                                 std::chrono::milliseconds ttl) noexcept;

/// Checks the Options fields that do not need the URLs parsed: node count, quorum range,
/// timeouts, drift, retry and limits. `identities` are the nodes' canonical addresses
/// (same order as options.nodes) for the duplicate check.
std::optional<std::string> check_options(const Options& options,
                                         const std::vector<std::string>& identities);

std::optional<std::string> check_key(std::string_view key, std::size_t max_key_bytes);

/// The longest TTL accepted: a year. Longer ones are almost certainly a unit mistake, and
/// every deadline computed from one must stay far from the clock's range.
inline constexpr std::chrono::milliseconds max_ttl{365LL * 24 * 3600 * 1000};

/// 0 < ttl <= max_ttl and ttl > 2 x node_timeout (a lock must outlive the round that takes
/// it).
std::optional<std::string> check_ttl(std::chrono::milliseconds ttl,
                                     std::chrono::milliseconds configured_node_timeout);

/// The time a failed round needs to be known: node_timeout plus a slack for the loop
/// (a tenth of it, at least 2 ms). The watchdog keeps two of these before the validity
/// ends: one round and one retry.
std::chrono::milliseconds watchdog_round_allowance(std::chrono::milliseconds node_timeout) noexcept;

/// ttl as above, wait >= 0 (milliseconds::max() waits without end), extend_every >= 0 and
/// < ttl, on_lost only with auto_extend, and with auto_extend a ttl that leaves the
/// watchdog time to report a failed round before the validity ends even after the
/// slowest acquisition (ttl - drift > (acquire rounds + 1) x watchdog_round_allowance).
std::optional<std::string> check_lock_options(const LockOptions& options,
                                              std::chrono::milliseconds configured_node_timeout,
                                              const DriftPolicy& drift = {});

}  // namespace redlock::core

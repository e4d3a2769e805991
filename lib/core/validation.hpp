#pragma once
// Input checks with messages that name the field and the bad value. Nothing is sent to
// any node before these pass, so a typo costs an error message, never a half-taken lock.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <redlock/options.hpp>

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

/// ttl > 0 and ttl > 2 x node_timeout (a lock must outlive the round that takes it).
std::optional<std::string> check_ttl(std::chrono::milliseconds ttl,
                                     std::chrono::milliseconds configured_node_timeout);

/// ttl as above, wait >= 0, extend_every >= 0 and < ttl when auto_extend.
std::optional<std::string> check_lock_options(const LockOptions& options,
                                              std::chrono::milliseconds configured_node_timeout);

}  // namespace redlock::core

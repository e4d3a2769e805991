#pragma once
// Errors as values: every operation that can fail for reasons outside the caller's
// control returns a redlock::Result carrying a redlock::Error.

#include <chrono>
#include <cstdint>
#include <string>
#include <system_error>
#include <vector>

#include <redlock/export.hpp>

namespace redlock {

/// Error codes of the `redlock` category. Not getting a lock is an ordinary outcome
/// (`conflict`), distinct from infrastructure trouble (`quorum_unreachable`). The rule,
/// the same for every kind of lock: an attempt is `quorum_unreachable` only when more than
/// N - quorum nodes failed (down, timed out, erroring), so that the nodes not failing
/// could not form a quorum; otherwise other holders' refusals made the difference and it
/// is a `conflict`. One node of five down never turns a held lock into an outage.
enum class errc {
  conflict = 1,        ///< Other owners' refusals left no quorum possible; a quorum was reachable.
  quorum_unreachable,  ///< More than N - quorum nodes are down, slow or erroring.
  validity_expired,    ///< A quorum agreed, but so late that no validity was left (TTL too short).
  timeout,             ///< A node did not answer before its deadline.
  cancelled,           ///< The client closed, or the caller's stop token asked to stop.
  invalid_argument,    ///< A bad key, TTL, duration or option; nothing was sent.
  connection_error,    ///< Connecting, reading or writing failed (refused, reset, DNS...).
  protocol_error,      ///< The peer sent bytes that are not a valid or expected RESP reply.
  auth_error,          ///< AUTH was refused (wrong password or user), or NOAUTH.
  redis_error,         ///< Redis answered with an error (READONLY, OOM, NOPERM, MOVED...).
  not_held,            ///< Extend or release: the caller does not own the lock on a quorum.
  lock_lost,           ///< The watchdog could not keep a quorum; the lock must be treated as gone.
  stale_token,         ///< A fenced write carried a token older than one the store has seen.
  overloaded,          ///< Too many commands are queued for a node that is not answering.
  tls_error,           ///< The TLS handshake or certificate verification failed.
  wrong_kind,          ///< The key is in use as another kind of lock (exclusive lock, semaphore,
                       ///< read-write lock); nothing was taken.
  hold_limit_reached,  ///< Auto-extension reached LockOptions::max_hold or max_extensions.
};

/// The `std::error_category` of `redlock::errc`.
REDLOCK_EXPORT const std::error_category& category() noexcept;

/// `e` as a std::error_code in the `redlock` category (found by ADL when an errc is
/// compared with or converted to a std::error_code).
inline std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), category()};
}

/// What one node did in one operation.
enum class NodeStatus {
  pending,           ///< No answer yet when the operation was decided (it may still apply).
  granted,           ///< Acquire, extend, release or fence succeeded on this node.
  held,              ///< The key is held by another value (see holder / remaining_ttl).
  not_held,          ///< Extend/release/fence: the key is not ours (expired or taken over).
  timeout,           ///< No answer before the per-node deadline.
  connection_error,  ///< Refused, reset, DNS failure, TLS failure, queue full.
  redis_error,       ///< Redis replied with an error, or a reply we could not interpret.
  cancelled,         ///< The client closed.
};

/// Human-readable name of a NodeStatus ("granted", "held", ...).
REDLOCK_EXPORT const char* to_string(NodeStatus status) noexcept;

/// Per-node outcome, so that "why did this fail" needs no debugger.
struct NodeOutcome {
  std::string node;                         ///< The node's URL with any password removed.
  NodeStatus status = NodeStatus::pending;  ///< What the node answered, or why it did not.
  std::error_code error;                    ///< Set for timeout / connection_error / redis_error.
  std::string detail;  ///< Redis' own error text, or the connection error's description.
  std::string holder;  ///< For `held`: the current holder's value when the node reported it.
  std::chrono::milliseconds remaining_ttl{-1};  ///< For `held`: the key's PTTL; -1 when unknown.
  std::uint64_t token = 0;  ///< Fencing: the counter this node returned on a grant.
  /// Time from the round's start (its commands go out together) until this node answered.
  std::chrono::microseconds latency{0};
  /// False for a grant (or extend) of a member in its guard period (Options::member_guard):
  /// the node did what was asked, but it may have lost keys, so the grant did not count
  /// toward the quorum; `detail` says for how much longer and why. What it granted is
  /// released like any other grant.
  bool counted = true;
};

/// One line describing a node outcome, e.g. "redis://127.0.0.1:7101: held (ttl 912 ms)".
REDLOCK_EXPORT std::string describe(const NodeOutcome& outcome);

/// An error: a code in the `redlock` category (or another category, for wrapped system
/// errors), a one-line message, and the per-node outcomes that led to it.
class Error {
 public:
  /// No error: an empty code and message.
  Error() = default;
  /// An error with `code`, the one-line `message` and the per-node outcomes behind it.
  Error(std::error_code code, std::string message, std::vector<NodeOutcome> nodes = {})
      : code_(code), message_(std::move(message)), nodes_(std::move(nodes)) {}

  /// The code: compare with a redlock::errc (`error == errc::conflict`).
  std::error_code code() const noexcept { return code_; }
  /// One line: what failed and, for quorum operations, how many nodes granted and why
  /// each other node did not.
  const std::string& message() const noexcept { return message_; }
  /// Per node, in the order of Options::nodes; empty for errors that involve no node.
  const std::vector<NodeOutcome>& nodes() const noexcept { return nodes_; }

  /// True when the code is `e` in the `redlock` category.
  bool operator==(errc e) const noexcept { return code_ == make_error_code(e); }

 private:
  std::error_code code_;
  std::string message_;
  std::vector<NodeOutcome> nodes_;
};

}  // namespace redlock

/// @cond
// Makes redlock::errc convertible to std::error_code. Left out of the API reference:
// it specialises a standard template, which is not ours to document.
template <>
struct std::is_error_code_enum<redlock::errc> : std::true_type {};
/// @endcond

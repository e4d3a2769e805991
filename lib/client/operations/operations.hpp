#pragma once
// The lock operations as asynchronous state machines on the loop thread: fan out to all
// nodes (round.hpp), feed the core's decision, and turn the outcome into a Result with a
// one-line message that says how many nodes agreed and why each other one did not.
// Every `done` runs exactly once on the loop thread.

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include <redlock/error.hpp>
#include <redlock/options.hpp>
#include <redlock/result.hpp>

#include "client/kinds/lock_state.hpp"
#include "client/util/messages.hpp"
#include "core/small_function.hpp"

namespace redlock::detail {

class Engine;
class Kind;
struct LockState;

using AcquireDone = std::function<void(Result<std::shared_ptr<LockState>>)>;
using ExtendDone = std::function<void(Result<core::Clock::time_point>)>;
struct Released {
  int deleted = 0;  ///< nodes where our value was found and deleted
  /// Only when nothing was deleted: the caller's "not held" error names each node's answer.
  std::vector<NodeOutcome> outcomes;
};
/// In place up to 48 bytes: the caller's own std::function and a lock's state, so that a
/// release passed down through the unlock's bookkeeping allocates nothing.
using ReleaseDone = core::SmallFunction<void(Result<Released>), 48>;
/// A confirmed release round's outcomes as a Released: not_held and granted both vote
/// "gone", only granted means a delete happened. The outcomes are copied only when no
/// node deleted anything; otherwise they stay with the round, which reuses them.
Released released_from(const std::vector<NodeOutcome>& outcomes);
using StatusDone = std::function<void(Result<std::vector<NodeOutcome>>)>;

/// Owner-checked extension of `value`'s hold of `kind` to `ttl` on all nodes, with that
/// kind's quorum. On success, the new valid_until measured from this round's start.
void start_extend(const std::shared_ptr<Engine>& engine, const Kind& kind, const std::string& value,
                  std::chrono::milliseconds ttl, ExtendDone done);
/// The exclusive lock's `key` held by `value`.
void start_extend(const std::shared_ptr<Engine>& engine, std::string key, std::string value,
                  std::chrono::milliseconds ttl, ExtendDone done);
/// The same for whatever `lock` holds.
void start_extend(const LockState& lock, std::chrono::milliseconds ttl, ExtendDone done);

/// Owner-checked delete on all nodes, announced to waiters; decided once no quorum can
/// still hold `value`. `kind` and `value` are kept alive by `keeper` (a lock's state), not
/// copied.
void start_release(const std::shared_ptr<Engine>& engine, std::shared_ptr<const void> keeper,
                   const Kind& kind, const std::string& value,
                   std::chrono::milliseconds node_timeout, ReleaseDone done);
/// The exclusive lock's `key` held by `value`.
void start_release(const std::shared_ptr<Engine>& engine, std::string key, std::string value,
                   std::chrono::milliseconds node_timeout, ReleaseDone done);
/// Whatever `lock` holds.
void start_release(const std::shared_ptr<LockState>& lock, std::chrono::milliseconds node_timeout,
                   ReleaseDone done);

/// One node's view of the exclusive lock `key` (the inspect script): held (holder,
/// remaining_ttl) or not_held.
void send_status(Node& node, std::string_view key, std::chrono::milliseconds timeout,
                 NodeCallback done);
/// Every node's view of `key` (waits for all, each up to its deadline).
void start_status(const std::shared_ptr<Engine>& engine, std::string key,
                  std::chrono::milliseconds node_timeout, StatusDone done);

/// Deadline of a node for the diagnostic rounds (status, inspect, release by value), which
/// have no ttl to derive one from: the configured node_timeout, else generous enough for
/// a remote node.
std::chrono::milliseconds diagnostic_timeout(const Engine& engine);

}  // namespace redlock::detail

#pragma once
// One fan-out: the same request to every node at once, each reply recorded as a per-node
// outcome and a vote, and the caller told as soon as the quorum decision is settled.
// Replies after the decision are still received (and dropped); the nodes' own
// callbacks keep the round alive until the last one.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <redlock/error.hpp>

#include "client/util/function_ref.hpp"
#include "core/quorum.hpp"
#include "core/small_function.hpp"
#include "core/validity.hpp"
#include "member/node.hpp"

namespace redlock::detail {

class Engine;

struct RoundResult {
  core::Decision decision = core::Decision::undecided;
  core::FailureKind failure = core::FailureKind::contention;
  int grants = 0;
  int quorum = 0;
  std::uint64_t max_token = 0;
  /// A key set with fencing: per key, the highest token among the grants counted.
  std::vector<std::uint64_t> max_tokens;
  /// Per node, in the order of Options::nodes; `pending` for nodes that had not
  /// answered when the round was decided.
  std::vector<NodeOutcome> outcomes;
  core::Clock::time_point start;
  core::Clock::time_point decided_at;
  /// Some node's call was cancelled because the client closed.
  bool cancelled = false;
  /// Decided impossible before the nodes still `pending` answered (RoundRules::
  /// abandons_stragglers).
  bool abandoned = false;

  bool reached() const noexcept { return decision == core::Decision::reached; }
  /// A failed acquire attempt whose own grants are being deleted: how long until the
  /// entries that refused it leave a quorum free (core::split_clears_in), if they can.
  std::optional<std::chrono::milliseconds> split_clears_in() const;
  /// A split vote's order (core::split_vote_retry): `own_value`, the failed attempt's,
  /// orders before every value that refused it. False when no node reported a holder.
  bool orders_first(std::string_view own_value) const;
  /// Nodes whose failure came before the command left this client (NodeReply::unsent).
  int unsent = 0;

  /// Our value may sit on a quorum: at least a quorum of nodes granted, did not answer
  /// in time or failed in transit; a node that reported another holder, or that the
  /// command never reached, surely does not hold it, and neither does, as far as any
  /// other client can have seen, a straggler an abandoned round gave up on (a node
  /// silent for us is silent for them). True of every reached round.
  bool may_hold_quorum() const;
  /// Every node timed out or had not answered when the round was decided: typical of a
  /// node_timeout below the round trip.
  bool no_node_answered() const;
  /// "2 of 5 nodes granted (quorum 3); <node>: held (ttl 912 ms); <node>: timeout (...)"
  std::string summary(const char* verb) const;
};

/// errc::wrong_kind naming the node and what the key is there, when some node of `round`
/// reported the key as another kind of lock; `what()` starts the message ("lock \"k\""),
/// made only then (an acquire checks every round).
std::optional<Error> wrong_kind_error(const RoundResult& round, FunctionRef<std::string()> what);

/// How a node's status counts toward the quorum.
using VoteRule = core::Vote (*)(NodeStatus);
core::Vote vote_owner_action(NodeStatus status);  // granted counts, held/not_held refuse
core::Vote vote_gone(NodeStatus status);          // granted or not_held both count (release)

/// Called once per node from inside run_round, never after it returns.
using SendToNode = FunctionRef<void(Node& node, NodeCallback done)>;

/// A round's decision callback: kept in place in the (reused) round state up to 128 bytes,
/// enough for an engine, a keeper, a kind and the caller's own callback (a release's,
/// whose 112 bytes took an allocation per lock cycle at 96).
using RoundDecided = core::SmallFunction<void(RoundResult&), 128>;

/// How a round decides, beyond its vote rule.
struct RoundRules {
  /// 0 = the engine's quorum.
  int quorum = 0;
  /// Decide only when every node answered (status queries).
  bool wait_for_all = false;
  /// The round sends releases, which the engine's shutdown waits for (Engine::count_release)
  /// until each node answered.
  bool counts_releases = false;
  /// An acquire attempt's node timeout: once another holder refused and the quorum hangs
  /// on nodes that have not answered, they get core::straggler_allowance (at most this),
  /// then the round is decided impossible (those nodes stay `pending` in its outcomes).
  /// 0: every node gets its whole deadline.
  std::chrono::milliseconds abandon_stragglers_within{0};
};

/// Starts a round over every node of `engine` (loop thread). `decided` runs exactly once,
/// on the loop thread, never from inside this call. It gets the result by reference: what
/// it keeps it moves out, and what it leaves (the outcomes with their node names) the
/// next round reuses instead of allocating it again.
void run_round(Engine& engine, SendToNode send, VoteRule rule, RoundDecided decided,
               RoundRules rules = {});

}  // namespace redlock::detail

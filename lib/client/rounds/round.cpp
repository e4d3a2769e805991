#include "client/rounds/round.hpp"

#include <uv.h>

#include <algorithm>

#include "client/engine/engine.hpp"
#include "client/rounds/outcome_pool.hpp"
#include "client/util/spare_pool.hpp"
#include "core/member_guard.hpp"
#include "core/retry.hpp"
#include "net/closing.hpp"
#include "net/timer.hpp"

namespace redlock::detail {

namespace {

struct RoundState;
void recycle(RoundState* state);

// Handed back by the last node callback. Each callback captures only a pointer and an
// index, which std::function stores without allocating (a shared_ptr would take one
// allocation per node per round); the nodes' contract (each callback runs exactly once)
// is what makes the count exact.
struct RoundState {
  core::QuorumRound quorum{1, 1};
  RoundResult result;
  VoteRule rule = nullptr;
  // The engine's nodes, for their guards (core/member_life.hpp): read only while
  // the round is undecided, when the operation that runs it keeps the engine alive.
  std::vector<std::unique_ptr<Node>>* nodes = nullptr;
  bool wait_for_all = false;
  RoundDecided decided;
  int callbacks_left = 0;
  int recording = 0;
  std::optional<Engine::ReleaseTally> releases;
  // RoundRules::abandons_stragglers: the loop for the straggler timer, made only when a
  // contended round waits on one; the slowest answer so far measures its allowance.
  uv_loop_s* straggler_loop = nullptr;
  std::chrono::milliseconds straggler_timeout{0};
  std::chrono::microseconds slowest_answer{0};
  net::TimerPtr straggler_timer;

  void reset(int nodes, int quorum_size, VoteRule vote_rule, bool all) {
    quorum.reset(nodes, quorum_size);
    // Field by field, every field of NodeOutcome but the node's name: the outcomes the
    // last round's caller left keep their strings' storage (run_round assigns the node
    // names into it).
    auto outcomes = std::move(result.outcomes);
    if (outcomes.capacity() == 0) outcomes = take_spare_outcomes();  // the last round's Lock has it
    outcomes.resize(static_cast<std::size_t>(nodes));
    for (auto& outcome : outcomes) {
      outcome.status = NodeStatus::pending;
      outcome.error = {};
      outcome.detail.clear();
      outcome.holder.clear();
      outcome.remaining_ttl = std::chrono::milliseconds(-1);  // unknown
      outcome.token = 0;
      outcome.latency = {};
      outcome.counted = true;
    }
    auto max_tokens = std::move(result.max_tokens);
    max_tokens.clear();
    result = RoundResult{};
    result.outcomes = std::move(outcomes);
    result.max_tokens = std::move(max_tokens);
    rule = vote_rule;
    wait_for_all = all;
    callbacks_left = 0;
    recording = 0;
    releases.reset();
    straggler_loop = nullptr;
    slowest_answer = std::chrono::microseconds(0);
  }

  void answered(std::size_t index, NodeReply&& reply) {
    if (releases && decided) releases->landed();
    --callbacks_left;
    // The decision's callback may make other nodes answer from inside it (a node closed
    // there fails its calls at once): the last of them must not free the state under it.
    ++recording;
    record(index, std::move(reply));
    if (--recording == 0 && callbacks_left == 0) recycle(this);
  }

  void record(std::size_t index, NodeReply&& reply) {
    if (!decided) return;  // already reported; a late reply changes nothing
    const auto now = core::Clock::now();
    auto& outcome = result.outcomes[index];
    outcome.status = reply.status;
    outcome.error = reply.error;
    // reset() cleared both: most replies (grants) carry neither, and skip the moves.
    if (!reply.detail.empty()) outcome.detail = std::move(reply.detail);
    if (!reply.holder.empty()) outcome.holder = std::move(reply.holder);
    outcome.remaining_ttl = reply.remaining_ttl;
    outcome.token = reply.token;
    // From the round's start: the commands go out together, within microseconds of it,
    // which is not worth a clock read per node sent.
    outcome.latency = std::chrono::duration_cast<std::chrono::microseconds>(now - result.start);
    if (reply.status == NodeStatus::cancelled) result.cancelled = true;
    if (reply.unsent) ++result.unsent;
    auto vote = rule(reply.status);
    // A release's "gone" is no grant: a member that lost the key has let it go too.
    if (vote == core::Vote::granted && rule != vote_gone && nodes != nullptr) {
      vote = counted_vote(index, now, reply.guard, reply.acks, outcome);
    }
    quorum.record(static_cast<int>(index), vote, reply.token);
    if (vote == core::Vote::granted) merge_tokens(reply.tokens);
    const bool settled = wait_for_all ? quorum.pending() == 0 : quorum.settled();
    if (settled) return report(now);
    if (straggler_loop != nullptr && quorum.contended()) wait_for_stragglers(outcome.latency, now);
  }

  // (Re)arms the straggler timer for the allowance the slowest answer so far gives.
  void wait_for_stragglers(std::chrono::microseconds latency, core::Clock::time_point now) {
    slowest_answer = std::max(slowest_answer, latency);
    const auto allowance = core::straggler_allowance(slowest_answer, straggler_timeout);
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(result.start + allowance - now);
    if (!straggler_timer) straggler_timer = net::Timer::create(straggler_loop);
    straggler_timer->start(std::max(left, std::chrono::milliseconds(0)), [this, allowance] {
      if (!decided) return;
      quorum.abandon_pending();
      result.abandoned = true;
      // Why these nodes were not waited for: their cause, when the answers had ruled a
      // quorum out (core::QuorumRound::failure_kind), and in every error's summary.
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(allowance);
      for (auto& outcome : result.outcomes) {
        if (outcome.status != NodeStatus::pending) continue;
        outcome.detail = "not waited for beyond " + std::to_string(waited.count()) +
                         " ms, as other owners had refused";
      }
      // As in answered(): the decision's callback may close the nodes, whose pending
      // calls then answer from inside it; the last of them must not free the state here.
      ++recording;
      report(core::Clock::now());
      if (--recording == 0 && callbacks_left == 0) recycle(this);
    });
  }

  // The grant of a member in its guard period, or one that too few of its replicas
  // acknowledged, is not counted (core/member_guard.hpp); its outcome says so: until when,
  // or the node's account of the WAIT.
  core::Vote counted_vote(std::size_t index, core::Clock::time_point now,
                          const core::MemberGuard* of_server, core::ReplicaAcks acks,
                          NodeOutcome& outcome) {
    const auto& guard = of_server != nullptr ? *of_server : (*nodes)[index]->guard();
    const auto vote = core::counted_vote(core::Vote::granted, guard, acks, now);
    if (vote != core::Vote::granted) {
      outcome.counted = false;
      if (core::guarded(guard, now)) outcome.detail = core::guarded_detail(guard, now);
    }
    return vote;
  }

  // Like the quorum's max_token, per key: grants recorded up to the decision.
  void merge_tokens(const std::vector<std::uint64_t>& tokens) {
    if (tokens.size() > result.max_tokens.size()) result.max_tokens.resize(tokens.size(), 0);
    for (std::size_t k = 0; k < tokens.size(); ++k) {
      result.max_tokens[k] = std::max(result.max_tokens[k], tokens[k]);
    }
  }

  void report(core::Clock::time_point now) {
    if (straggler_timer) straggler_timer->stop();
    // A release confirmed on enough nodes holds the client's shutdown no longer: the
    // others have it written to their connections, which a close ends with a FIN behind
    // it, so a node that is only slow still applies it, and one that is silent would keep
    // a closing client waiting for nothing (Client::close()).
    if (releases) releases->landed(callbacks_left);
    result.decision = quorum.decision();
    if (wait_for_all && result.decision == core::Decision::undecided) {
      result.decision = core::Decision::impossible;
    }
    result.failure = quorum.failure_kind();
    result.grants = quorum.grants_at_decision();
    result.max_token = quorum.max_token();
    result.decided_at = now;
    auto callback = std::move(decided);
    decided = nullptr;
    callback(result);
  }
};

// Rounds are reused: a state with its vectors costs about ten allocations, and a lock
// cycle runs two rounds. The bound is set by bursts, not by the average: W operations
// started in step (a loop turn that reads one node's replies decides all of them) hold
// 2 W rounds at one moment and W the next, and a bound below W freed and allocated the
// difference on every swing (one new round per cycle at 128 chains with a bound of 64).
// About 1 KB each.
constexpr std::size_t max_spare_rounds = 1024;

SparePool<std::unique_ptr<RoundState>>& spare_rounds() {
  // Never destroyed: a round answered during static destruction still gives back.
  static auto* const pool = new SparePool<std::unique_ptr<RoundState>>(max_spare_rounds);
  return *pool;
}

RoundState* new_round(int nodes, int quorum_size, VoteRule rule, bool wait_for_all) {
  std::unique_ptr<RoundState> state = spare_rounds().take();
  if (!state) state = std::make_unique<RoundState>();
  state->reset(nodes, quorum_size, rule, wait_for_all);
  return state.release();
}

void recycle(RoundState* state) {
  std::unique_ptr<RoundState> owned(state);
  owned->decided = nullptr;
  owned->nodes = nullptr;
  owned->releases.reset();
  owned->straggler_timer.reset();
  spare_rounds().give_back(std::move(owned));
}

}  // namespace

std::optional<Error> wrong_kind_error(const RoundResult& round, FunctionRef<std::string()> what) {
  for (const auto& outcome : round.outcomes) {
    if (outcome.error != errc::wrong_kind) continue;
    return Error(make_error_code(errc::wrong_kind),
                 what() + ": on " + outcome.node + " " + outcome.detail +
                     "; a key serves one kind of lock, use another name",
                 round.outcomes);
  }
  return std::nullopt;
}

core::Vote vote_owner_action(NodeStatus status) {
  switch (status) {
    case NodeStatus::granted:
      return core::Vote::granted;
    case NodeStatus::held:
    case NodeStatus::not_held:
      return core::Vote::refused;
    default:
      return core::Vote::failed;
  }
}

core::Vote vote_gone(NodeStatus status) {
  switch (status) {
    case NodeStatus::granted:
    case NodeStatus::not_held:
      return core::Vote::granted;
    case NodeStatus::held:
      return core::Vote::refused;
    default:
      return core::Vote::failed;
  }
}

std::optional<std::chrono::milliseconds> RoundResult::split_clears_in() const {
  // A node that had not answered when enough refusals decided the round counts as free:
  // its answer is on the way, and a grant is deleted with the others. If it was held, the
  // attempt comes early and the next refusal reads the TTL it lacked.
  int may_be_free = 0;
  std::vector<std::chrono::milliseconds> refusing_ttls;
  for (const auto& outcome : outcomes) {
    if (outcome.status == NodeStatus::granted || outcome.status == NodeStatus::pending) {
      ++may_be_free;
    }
    if (outcome.status == NodeStatus::held) refusing_ttls.push_back(outcome.remaining_ttl);
  }
  return core::split_clears_in(quorum, may_be_free, std::move(refusing_ttls));
}

bool RoundResult::orders_first(std::string_view own_value) const {
  bool contended = false;
  for (const auto& outcome : outcomes) {
    if (outcome.status != NodeStatus::held || outcome.holder.empty()) continue;
    if (outcome.holder <= own_value) return false;
    contended = true;
  }
  return contended;
}

bool RoundResult::may_hold_quorum() const {
  int possible = -unsent;
  for (const auto& outcome : outcomes) {
    if (outcome.status == NodeStatus::held) continue;
    if (abandoned && outcome.status == NodeStatus::pending) continue;
    ++possible;
  }
  return possible >= quorum;
}

bool RoundResult::no_node_answered() const {
  bool timed_out = false;
  for (const auto& outcome : outcomes) {
    if (outcome.status == NodeStatus::timeout) {
      timed_out = true;
    } else if (outcome.status != NodeStatus::pending) {
      return false;
    }
  }
  return timed_out;
}

std::string RoundResult::summary(const char* verb) const {
  std::string text = std::to_string(grants) + " of " + std::to_string(outcomes.size()) + " nodes " +
                     verb + " (quorum " + std::to_string(quorum) + ")";
  for (const auto& outcome : outcomes) {
    if (outcome.status == NodeStatus::granted && outcome.counted) continue;
    text += "; ";
    text += describe(outcome);
  }
  return text;
}

void run_round(Engine& engine, SendToNode send, VoteRule rule, RoundDecided decided,
               RoundRules rules) {
  auto& nodes = engine.nodes();
  const int n = static_cast<int>(nodes.size());
  auto* state =
      new_round(n, rules.quorum == 0 ? engine.quorum() : rules.quorum, rule, rules.wait_for_all);
  state->decided = std::move(decided);
  state->nodes = &nodes;
  state->result.quorum = state->quorum.quorum();
  state->result.start = core::Clock::now();
  // A reused outcome list mostly comes back to the client that named it: comparing is
  // cheaper than assigning the same name again.
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    auto& name = state->result.outcomes[i].node;
    if (name != engine.node_names()[i]) name = engine.node_names()[i];
  }
  if (!engine.open()) {
    // Closed between the post and now: answer on the next loop turn, like a node would.
    for (auto& outcome : state->result.outcomes) outcome.status = NodeStatus::cancelled;
    state->result.cancelled = true;
    net::run_next_turn(engine.loop(), [state] {
      state->report(core::Clock::now());
      recycle(state);
    });
    return;
  }
  state->callbacks_left = n;
  if (rules.counts_releases) state->releases = engine.count_releases(n);
  if (rules.abandon_stragglers_within.count() > 0) {
    state->straggler_loop = engine.loop();
    state->straggler_timeout = rules.abandon_stragglers_within;
  }
  const FanOut fan_out;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    send(*nodes[i], [state, i](NodeReply&& reply) { state->answered(i, std::move(reply)); });
  }
}

}  // namespace redlock::detail

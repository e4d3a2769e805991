#include "client/operations/operations.hpp"

#include <hiredis/hiredis.h>

#include <array>

#include "client/engine/engine.hpp"
#include "client/kinds/kind.hpp"
#include "client/kinds/lock_state.hpp"
#include "client/operations/observe.hpp"
#include "client/rounds/round.hpp"
#include "core/validity.hpp"
#include "scripts/lock_scripts.hpp"

namespace redlock::detail {

using core::Clock;
using std::chrono::milliseconds;

milliseconds diagnostic_timeout(const Engine& engine) {
  const auto configured = engine.options().node_timeout;
  return configured.count() > 0 ? configured : milliseconds(200);
}

Released released_from(const std::vector<NodeOutcome>& outcomes) {
  Released released;
  for (const auto& outcome : outcomes) {
    if (outcome.status == NodeStatus::granted) ++released.deleted;
  }
  if (released.deleted == 0) released.outcomes = outcomes;
  return released;
}

namespace {

/// The error of a failed round, with the round's summary and, when no node answered at
/// all, the likeliest cause.
Error round_error(errc code, std::string what, const RoundResult& round, const char* verb,
                  milliseconds node_timeout) {
  auto message = std::move(what) + round.summary(verb);
  if (round.no_node_answered()) {
    message += "; no node answered within " + std::to_string(node_timeout.count()) +
               " ms: is node_timeout below the round trip to the nodes?";
  }
  return Error(make_error_code(code), std::move(message), round.outcomes);
}

}  // namespace

void start_extend(const std::shared_ptr<Engine>& engine, const Kind& kind, const std::string& value,
                  milliseconds ttl, ExtendDone done) {
  auto what = "extend " + kind.describe();
  if (!engine->accepting()) return done(cancelled_error(what));
  const auto timeout = engine->node_timeout(ttl);
  run_round(
      *engine,
      [&](Node& node, NodeCallback reply) {
        kind.send_extend(node, value, ttl, timeout, std::move(reply));
      },
      vote_owner_action,
      [engine, key = kind.key(), what = std::move(what), ttl, timeout,
       done = std::move(done)](RoundResult& round) {
        observe_lock(*engine, key, LockOperation::extend, round);
        if (round.cancelled && !engine->open()) return done(cancelled_error(what));
        if (auto wrong = wrong_kind_error(round, [&] { return what; })) {
          return done(std::move(*wrong));
        }
        if (!round.reached()) {
          const auto code = round.failure == core::FailureKind::unreachable
                                ? errc::quorum_unreachable
                                : errc::not_held;
          return done(round_error(code, what + " failed: ", round, "extended", timeout));
        }
        const auto valid_until = core::valid_until(round.start, ttl, engine->drift());
        if (!core::still_valid(valid_until, Clock::now())) {
          auto message = what + ": a quorum extended after " +
                         elapsed_ms(round.start, Clock::now()) + ", leaving no validity";
          return done(Error(make_error_code(errc::validity_expired), std::move(message),
                            std::move(round.outcomes)));
        }
        done(valid_until);
      },
      {.quorum = kind.quorum()});
}

void start_extend(const std::shared_ptr<Engine>& engine, std::string key, std::string value,
                  milliseconds ttl, ExtendDone done) {
  start_extend(engine, Kind::exclusive(std::move(key)), value, ttl, std::move(done));
}

void start_extend(const LockState& lock, milliseconds ttl, ExtendDone done) {
  start_extend(lock.engine, lock.kind, lock.value, ttl, std::move(done));
}

void start_release(const std::shared_ptr<Engine>& engine, std::string key, std::string value,
                   milliseconds node_timeout, ReleaseDone done) {
  auto names = std::make_shared<const std::pair<Kind, std::string>>(Kind::exclusive(std::move(key)),
                                                                    std::move(value));
  start_release(engine, names, names->first, names->second, node_timeout, std::move(done));
}

void start_release(const std::shared_ptr<LockState>& lock, milliseconds node_timeout,
                   ReleaseDone done) {
  start_release(lock->engine, lock, lock->kind, lock->value, node_timeout, std::move(done));
}

void start_release(const std::shared_ptr<Engine>& engine, std::shared_ptr<const void> keeper,
                   const Kind& kind, const std::string& value, milliseconds node_timeout,
                   ReleaseDone done) {
  // Confirmed once no quorum can still hold the value: N - q + 1 nodes without it leave
  // at most q - 1 that may (for a semaphore's larger q, fewer than q confirmations).
  const int nodes = static_cast<int>(engine->node_names().size());
  const int quorum = kind.quorum() == 0 ? engine->quorum() : kind.quorum();
  auto decided = [engine, keeper, kind = &kind, done = std::move(done)](RoundResult& round) {
    observe_lock(*engine, kind->key(), LockOperation::release, round);
    const auto what = [&] { return "release " + kind->describe(); };
    if (round.cancelled && !engine->open()) return done(cancelled_error(what()));
    if (auto wrong = wrong_kind_error(round, what)) return done(std::move(*wrong));
    if (!round.reached()) {
      auto message = what() + " not confirmed: " + round.summary("confirmed") +
                     "; the lock may stay held there until its ttl ends";
      return done(Error(make_error_code(errc::quorum_unreachable), std::move(message),
                        std::move(round.outcomes)));
    }
    done(released_from(round.outcomes));
  };
  // Every lock cycle runs one: kept in the reused round state, not allocated.
  static_assert(RoundDecided::keeps_in_place<decltype(decided)>);
  run_round(*engine,
            [&](Node& node, NodeCallback reply) {
              kind.send_release(node, value, Announce::yes, node_timeout, std::move(reply));
            },
            vote_gone, std::move(decided), {.quorum = nodes - quorum + 1, .counts_releases = true});
  // After the sends: a waiter of this client woken now has its acquire queued behind
  // the release on every connection.
  if (auto* notifier = engine->notifier_if_started(); notifier != nullptr && engine->open()) {
    for (const auto& each : kind.keys()) notifier->released_locally(each, value);
  }
}

namespace {

// The inspect script's {pttl, value}, or {-3, type} for a key of another kind.
NodeReply read_status(const redisReply* r, std::string_view where) {
  NodeReply status;
  if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
      r->element[0]->type == REDIS_REPLY_INTEGER && r->element[1]->type == REDIS_REPLY_STRING) {
    if (r->element[0]->integer == -3) {
      status = wrong_kind_reply({r->element[1]->str, r->element[1]->len});
    } else if (r->element[0]->integer == -2) {
      status.status = NodeStatus::not_held;
    } else {
      status.status = NodeStatus::held;
      status.remaining_ttl = milliseconds(r->element[0]->integer);
      status.holder.assign(r->element[1]->str, r->element[1]->len);
    }
    return status;
  }
  status = unexpected_reply_to("the inspect script", r, where);
  return status;
}

}  // namespace

void send_status(Node& node, std::string_view key, milliseconds timeout, NodeCallback done) {
  const std::array<std::string_view, 1> keys{key};
  node.run({.script = &scripts::inspect(), .keys = keys, .read = read_status, .may_grant = false},
           timeout, std::move(done));
}

void start_status(const std::shared_ptr<Engine>& engine, std::string key, milliseconds node_timeout,
                  StatusDone done) {
  run_round(
      *engine,
      [&](Node& node, NodeCallback reply) {
        send_status(node, key, node_timeout, std::move(reply));
      },
      vote_owner_action,
      [engine, key, done = std::move(done)](RoundResult& round) {
        if (round.cancelled && !engine->open())
          return done(cancelled_error("status " + quote_key(key)));
        done(std::move(round.outcomes));
      },
      {.wait_for_all = true});
}

}  // namespace redlock::detail

// Acquiring a primitive of the lock family: the exclusive lock's attempt loop (fan-out,
// early decision, validity from the attempt's start, release of leftovers on every node
// after a failed attempt, jittered retries, waiting woken by release announcements)
// with the primitive's own scripts and quorum.

#include <algorithm>

#include "client/engine.hpp"
#include "client/family/held.hpp"
#include "client/lock_state.hpp"
#include "client/round.hpp"
#include "client/timer.hpp"
#include "client/watchdog.hpp"
#include "core/lock_value.hpp"
#include "core/retry.hpp"

namespace redlock::detail {

using core::Clock;
using std::chrono::milliseconds;

namespace {

/// How long until the earliest holder seen by the nodes that refused can expire. For a
/// semaphore any one of the K holders leaving frees a permit, so the shortest remaining
/// time among refusing nodes is when an attempt can first succeed.
std::optional<milliseconds> earliest_expiry(const RoundResult& round) {
  std::optional<milliseconds> earliest;
  int held = 0;
  for (const auto& outcome : round.outcomes) {
    if (outcome.status != NodeStatus::held) continue;
    ++held;
    if (outcome.remaining_ttl.count() >= 0 && (!earliest || outcome.remaining_ttl < *earliest)) {
      earliest = outcome.remaining_ttl;
    }
  }
  // Refused by a quorum of nodes: the holders are real, and one of them leaving announces
  // a release. Fewer refusals mean a release still landing on some nodes (a waiter woken
  // by the first node's announcement can reach a slower node before the release does) or
  // contenders splitting the nodes: nothing will announce, so it must not sleep long.
  if (held < round.quorum) return std::nullopt;
  return earliest;
}

/// True when some node granted: the refusals were transient (see earliest_expiry).
bool partly_granted(const RoundResult& round) {
  for (const auto& outcome : round.outcomes) {
    if (outcome.status == NodeStatus::granted) return true;
  }
  return false;
}

class FamilyAcquire final : public Cancellable, public std::enable_shared_from_this<FamilyAcquire> {
 public:
  FamilyAcquire(std::shared_ptr<Engine> engine, std::shared_ptr<const Held> held,
                LockOptions options, AcquireDone done)
      : engine_(std::move(engine)),
        held_(std::move(held)),
        what_(held_->describe()),
        options_(std::move(options)),
        done_(std::move(done)),
        started_(Clock::now()),
        schedule_({engine_->options().retry_delay, engine_->options().retry_jitter,
                   options_.max_attempts},
                  started_ + options_.wait, engine_->borrowed_random()),
        node_timeout_(engine_->node_timeout(options_.ttl)) {}

  void start() {
    if (options_.wait.count() == 0) return attempt();
    timer_ = Timer::create(engine_->loop());
    engine_->track(shared_from_this());
    if (finished_) return;
    // Subscribed before the first attempt: a release between a failed attempt and the
    // wait cannot be missed.
    std::weak_ptr<FamilyAcquire> weak = shared_from_this();
    const auto watched = engine_->notifier().watch(
        held_->key,
        [weak] {
          if (auto self = weak.lock(); self && !self->finished_ && self->engine_->open()) {
            self->timer_->stop();
            self->attempt();
          }
        },
        [weak] {
          if (auto self = weak.lock(); self && !self->finished_ && self->attempts_ == 0) {
            self->attempt();
          }
        });
    watch_id_ = watched.id;
    if (watched.ready) attempt();
  }

  void cancel() override { finish(cancelled_error("acquire " + what_)); }

 private:
  void attempt() {
    ++attempts_;
    if (watch_id_) engine_->notifier().attempt_started(*watch_id_);
    auto value = core::new_lock_value();
    run_round(
        *engine_,
        [&](Node& node, NodeCallback done) {
          send_family_acquire(node, *held_, value, options_.ttl, options_.fencing, node_timeout_,
                              std::move(done));
        },
        vote_owner_action,
        [self = shared_from_this(), value](RoundResult& round) mutable {
          self->on_round(std::move(round), std::move(value));
        },
        held_->quorum);
  }

  void on_round(RoundResult round, std::string value) {
    if (finished_) return;
    const auto what = "acquire " + what_;
    if (round.cancelled && !engine_->open()) return finish(cancelled_error(what));
    if (auto wrong = wrong_kind_error(round, [&] { return what; })) {
      release_leftovers(value, round);
      return finish(std::move(*wrong));
    }
    if (!round.reached()) {
      const auto code = round.failure == core::FailureKind::unreachable ? errc::quorum_unreachable
                                                                        : errc::conflict;
      auto message = what + " failed: " + round.summary("granted");
      return attempt_failed(Error(make_error_code(code), std::move(message), round.outcomes), value,
                            round);
    }
    if (options_.fencing && !engine_->seams().skip_fencing_write_back) {
      return write_back_token(std::move(round), std::move(value));
    }
    if (options_.fencing && held_->primitive == Primitive::keys) {
      auto tokens = round.max_tokens;
      return succeed(std::move(round), std::move(value), std::nullopt, std::move(tokens));
    }
    if (options_.fencing) {
      const auto token = round.max_token;
      return succeed(std::move(round), std::move(value), token);
    }
    succeed(std::move(round), std::move(value), std::nullopt);
  }

  // A writer's token, or a key set's token per key, as for the exclusive lock
  // (docs/fencing.md): raised on every granted node before it is handed out, so a later
  // holder's quorum meets one of them.
  void write_back_token(RoundResult acquired, std::string value) {
    const std::uint64_t token = acquired.max_token;
    auto shared = std::make_shared<RoundResult>(std::move(acquired));
    const bool key_set = held_->primitive == Primitive::keys;
    if (key_set && shared->max_tokens.size() != held_->keys.size()) {
      // Every granting node answers one token per key; anything else is a protocol error.
      auto message = "acquire " + what_ + " failed: the nodes' grants carried " +
                     std::to_string(shared->max_tokens.size()) + " fencing tokens for " +
                     std::to_string(held_->keys.size()) + " keys";
      return attempt_failed(
          Error(make_error_code(errc::protocol_error), std::move(message), shared->outcomes), value,
          *shared);
    }
    run_round(
        *engine_,
        [&](Node& node, NodeCallback done) {
          if (key_set) {
            return send_key_set_fence(node, *held_, value, shared->max_tokens, node_timeout_,
                                      std::move(done));
          }
          send_family_fence(node, *held_, value, token, node_timeout_, std::move(done));
        },
        vote_owner_action,
        [self = shared_from_this(), shared, value, token](RoundResult& fenced) mutable {
          if (self->finished_) return;
          const auto what = "acquire " + self->what_;
          if (fenced.cancelled && !self->engine_->open())
            return self->finish(cancelled_error(what));
          if (!fenced.reached()) {
            const auto code = fenced.failure == core::FailureKind::unreachable
                                  ? errc::quorum_unreachable
                                  : errc::validity_expired;
            auto message = what + " failed: the fencing token write-back failed: " +
                           fenced.summary("confirmed");
            return self->attempt_failed(
                Error(make_error_code(code), std::move(message), fenced.outcomes), value, *shared);
          }
          if (self->held_->primitive == Primitive::keys) {
            auto tokens = shared->max_tokens;
            return self->succeed(std::move(*shared), std::move(value), std::nullopt,
                                 std::move(tokens));
          }
          self->succeed(std::move(*shared), std::move(value), token);
        },
        held_->quorum);
  }

  void succeed(RoundResult round, std::string value, std::optional<std::uint64_t> token,
               std::vector<std::uint64_t> tokens = {}) {
    const auto what = "acquire " + what_;
    const auto now = Clock::now();
    const auto valid_until = core::valid_until(round.start, options_.ttl, engine_->drift());
    if (valid_until <= now) {
      auto message = what + " failed: a quorum agreed too late, leaving no validity of the " +
                     std::to_string(options_.ttl.count()) + " ms ttl";
      return attempt_failed(
          Error(make_error_code(errc::validity_expired), std::move(message), round.outcomes), value,
          round);
    }
    auto state = std::make_shared<LockState>();
    state->engine = engine_;
    state->resource = held_->key;
    state->held = held_;
    state->value = std::move(value);
    state->token = token;
    state->tokens = std::move(tokens);
    state->nodes = std::move(round.outcomes);
    state->set_ttl(options_.ttl);
    state->extend_every = options_.extend_every;
    state->set_valid_until(valid_until);
    if (options_.auto_extend) start_watchdog(state, options_.on_lost);
    finish(std::move(state));
  }

  // A failed attempt may have left our value on nodes that granted, did not answer in
  // time or answered after the decision: released on each of them, and announced when
  // the value may sit on a quorum (others' waiters may have seen it as the holder; see
  // operations.cpp). A writer's intent stays while it waits (it keeps new readers out).
  void release_leftovers(const std::string& value, const RoundResult& round) {
    if (!engine_->open()) return;
    auto& nodes = engine_->nodes();
    const auto announce = round.may_hold_quorum() ? Announce::yes : Announce::no;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const auto& outcome = round.outcomes[i];
      if (outcome.status == NodeStatus::held || outcome.error == errc::wrong_kind) continue;
      send_family_release(*nodes[i], *held_, value, announce, node_timeout_,
                          engine_->count_release([](NodeReply) {}), /*keep_intent=*/true);
    }
  }

  // A writer that gives up withdraws its intent from every node.
  void withdraw_intent(const std::string& value) {
    if (held_->primitive != Primitive::writer || !engine_->open()) return;
    for (auto& node : engine_->nodes()) {
      send_family_release(*node, *held_, value, Announce::no, node_timeout_,
                          engine_->count_release([](NodeReply) {}));
    }
  }

  void attempt_failed(Error error, const std::string& value, const RoundResult& round) {
    release_leftovers(value, round);
    if (!engine_->open()) return finish(cancelled_error("acquire " + what_));
    const auto now = Clock::now();
    std::optional<Clock::time_point> next;
    if (timer_) {
      // A key set listens on its first key only: sleeping until a holder of another key
      // expires could miss that key's release, so it retries at the ordinary delay.
      auto expiry = held_->primitive == Primitive::keys ? std::nullopt : earliest_expiry(round);
      // Refused by a holder whose release was already announced: the release has not
      // reached these nodes yet and will announce nothing new, so look again soon. It
      // still counts as a holder for the wake, which is not handed on into the same
      // refusal.
      const bool holder_seen = expiry.has_value();
      const bool leaving =
          holder_seen && watch_id_ &&
          engine_->notifier().announced_released(*watch_id_, round.single_holder());
      if (leaving) expiry.reset();
      if (watch_id_ && engine_->notifier().attempt_failed(*watch_id_, holder_seen)) {
        next = schedule_.next_attempt(attempts_, now, milliseconds(0));
        if (next) next = now;
      } else {
        next = schedule_.next_attempt(attempts_, now, expiry);
        // Partly granted and refused by fewer than a quorum, or refused by a leaving
        // holder: try again within a jittered couple of node deadlines instead of a whole
        // retry delay.
        if (next && !expiry && (leaving || partly_granted(round))) {
          // A release that announced but failed elsewhere leaves its holder until the
          // TTL: doubling the span then keeps the waiters from polling at full rate.
          leaving_streak_ = leaving ? std::min(leaving_streak_ + 1, 6) : 0;
          next = std::min(*next, now + core::backoff_retry(std::max(leaving_streak_, 1),
                                                           node_timeout_, engine_->random()()));
        }
        // A waiting writer's intent must be refreshed before it ends on the nodes, or new
        // readers get in again: its next attempt comes within half the intent's life.
        if (next && held_->primitive == Primitive::writer) {
          next = std::min(*next, now + held_->intent_ttl / 2);
        }
      }
    }
    if (!next) {
      withdraw_intent(value);
      return give_up(std::move(error), now);
    }
    timer_->start(std::chrono::ceil<milliseconds>(*next - now), [self = shared_from_this()] {
      if (!self->finished_) self->attempt();
    });
  }

  void give_up(Error error, Clock::time_point now) {
    if (attempts_ > 1) {
      const auto elapsed = std::chrono::duration_cast<milliseconds>(now - started_).count();
      error = Error(error.code(),
                    error.message() + " (after " + std::to_string(attempts_) + " attempts in " +
                        std::to_string(elapsed) + " ms)",
                    error.nodes());
    }
    finish(std::move(error));
  }

  void finish(Result<std::shared_ptr<LockState>> result) {
    if (finished_) return;
    finished_ = true;
    // A reader that got in passes the wake on as if it had not: the next waiting reader
    // can share the lock too, and a writer behind it tries (and leaves its intent).
    const bool keeps_wake = result.has_value() && held_->primitive != Primitive::reader;
    if (watch_id_) engine_->notifier().unwatch(*watch_id_, keeps_wake);
    if (timer_) {
      timer_.reset();
      engine_->untrack(this);
    }
    auto done = std::move(done_);
    done(std::move(result));
  }

  std::shared_ptr<Engine> engine_;
  std::shared_ptr<const Held> held_;
  std::string what_;
  LockOptions options_;
  AcquireDone done_;
  Clock::time_point started_;
  core::RetrySchedule schedule_;
  milliseconds node_timeout_;
  TimerPtr timer_;  // only when waiting; closed in finish()
  std::optional<ReleaseNotifier::WaiterId> watch_id_;
  int attempts_ = 0;
  int leaving_streak_ = 0;  // consecutive refusals by holders announced as released
  bool finished_ = false;
};

}  // namespace

void start_family_acquire(const std::shared_ptr<Engine>& engine, std::shared_ptr<const Held> held,
                          LockOptions options, AcquireDone done) {
  std::make_shared<FamilyAcquire>(engine, std::move(held), std::move(options), std::move(done))
      ->start();
}

}  // namespace redlock::detail

// The one I/O shell of every acquisition (lock, try_lock, read_lock, write_lock,
// acquire_permit, lock_all; sync, async and Asio): it runs core::Acquisition, which
// decides every step, and carries its actions out on the loop thread. What differs
// between the kinds is data (client/kinds/kind.hpp): the scripts, the quorum, how a refusal
// reads, and a writer's intent.

#include "client/operations/acquire.hpp"

#include "client/engine/engine.hpp"
#include "client/engine/stop_link.hpp"
#include "client/kinds/kind.hpp"
#include "client/operations/observe.hpp"
#include "client/operations/watchdog.hpp"
#include "client/rounds/round.hpp"
#include "client/util/recycling_allocator.hpp"
#include "client/util/spare_texts.hpp"
#include "core/acquisition.hpp"
#include "core/lock_value.hpp"
#include "net/timer.hpp"

namespace redlock::detail {

using core::AcquireAction;
using core::AcquireCause;
using core::Clock;
using std::chrono::milliseconds;

namespace {

using Step = AcquireAction::Step;

errc code_of(AcquireCause cause) {
  switch (cause) {
    case AcquireCause::conflict:
      return errc::conflict;
    case AcquireCause::unreachable:
      return errc::quorum_unreachable;
    case AcquireCause::validity_expired:
    case AcquireCause::write_back_failed:
      return errc::validity_expired;
    case AcquireCause::wrong_kind:
      return errc::wrong_kind;
    case AcquireCause::protocol_error:
      return errc::protocol_error;
    case AcquireCause::stopped:
    case AcquireCause::closed:
    case AcquireCause::none:
      break;
  }
  return errc::cancelled;
}

core::Acquisition::Config config_of(const Engine& engine, const Kind& kind,
                                    const LockOptions& options) {
  core::Acquisition::Config config;
  config.ttl = options.ttl;
  config.wait = options.wait;
  config.retry = {engine.options().retry_delay, engine.options().retry_jitter,
                  options.max_attempts};
  config.fail_fast = options.fail_fast;
  config.write_back = options.fencing && kind.fences() && !engine.seams().skip_fencing_write_back;
  config.node_timeout = engine.node_timeout(options.ttl);
  config.drift = engine.drift();
  config.sleeps_on_holder = kind.sleeps_on_holder();
  config.refresh_within = kind.refresh_within();
  return config;
}

class AcquireOperation final : public Cancellable,
                               public std::enable_shared_from_this<AcquireOperation> {
 public:
  AcquireOperation(std::shared_ptr<Engine> engine, Kind kind, LockOptions options, AcquireDone done)
      : engine_(std::move(engine)),
        kind_(std::move(kind)),
        options_(std::move(options)),
        done_(std::move(done)),
        node_timeout_(engine_->node_timeout(options_.ttl)),
        machine_(config_of(*engine_, kind_, options_), Clock::now(), engine_->borrowed_random()) {}

  void start() {
    if (options_.stop.stop_possible() && !options_.stop.stop_requested()) {
      std::weak_ptr<AcquireOperation> weak = shared_from_this();
      stop_link_.link(engine_, options_.stop, [weak] {
        if (auto self = weak.lock()) self->act(self->machine_.stop());
      });
    }
    if (options_.stop.stop_requested() || !engine_->accepting() || !machine_.waiting()) {
      return act(
          machine_.start(Clock::now(), options_.stop.stop_requested(), engine_->accepting()));
    }
    timer_ = net::Timer::create(engine_->loop());
    engine_->track(shared_from_this());
    if (machine_.done()) return;  // the engine was already closing
    // Subscribed before the first attempt, so a release between a failed attempt and the
    // wait cannot be missed.
    std::weak_ptr<AcquireOperation> weak = shared_from_this();
    const auto watched = engine_->notifier().watch(
        kind_.key(),
        [weak] {
          if (auto self = weak.lock()) self->on_woken();
        },
        [weak] {
          if (auto self = weak.lock()) self->on_subscribed();
        });
    watch_id_ = watched.id;
    if (watched.ready) on_subscribed();
  }

  void cancel() override { act(machine_.close()); }

 private:
  void on_subscribed() {
    if (machine_.done() || machine_.attempts() > 0) return;
    const bool others = engine_->accepting() && kind_.queues_behind_waiters() &&
                        engine_->notifier().others_waiting_before(*watch_id_);
    if (others) engine_->notifier().wait_for_turn(*watch_id_);
    act(machine_.start(Clock::now(), options_.stop.stop_requested(), engine_->accepting(), others));
  }

  // A release was announced and this waiter's turn came.
  void on_woken() {
    if (machine_.done()) return;
    auto action = machine_.woken(Clock::now(), engine_->accepting());
    if (action.step == Step::send_attempt) {
      timer_->stop();
      observe_wake(*engine_, kind_.key(), WakeCause::announcement, machine_.started());
    }
    act(action);
  }

  void on_timer() {
    if (machine_.done()) return;
    observe_wake(*engine_, kind_.key(), WakeCause::timer, machine_.started());
    act(machine_.timer_fired(Clock::now(), engine_->accepting()));
  }

  // Carries out what the machine decided.
  void act(const AcquireAction& action) {
    if (action.release_attempt) release_leftovers();
    switch (action.step) {
      case Step::none:
        return;
      case Step::send_attempt:
        return send_attempt();
      case Step::send_write_back:
        return send_write_back();
      case Step::sleep: {
        const auto now = Clock::now();
        timer_->start(std::chrono::ceil<milliseconds>(std::max(action.until, now) - now),
                      [self = shared_from_this()] { self->on_timer(); });
        return;
      }
      case Step::hand_out:
        return hand_out(action.valid_until);
      case Step::give_up:
        return give_up(action);
    }
  }

  void send_attempt() {
    if (watch_id_) engine_->notifier().attempt_started(*watch_id_);
    // The value's storage comes back to the spares with the lock that holds it.
    if (value_.capacity() < core::lock_value_size) value_ = spare_buffer(core::lock_value_size);
    core::write_lock_value(value_);
    last_round_.reset();
    // A waiter sleeps until a single holder's entry can expire, so it needs that TTL
    // with each refusal; a single attempt only reports it.
    const Kind::Attempt attempt(value_, options_.ttl, options_.fencing,
                                timer_ ? HolderTtl::with_attempt : HolderTtl::after_refusal);
    run_round(
        *engine_,
        [&](Node& node, NodeCallback done) {
          kind_.send_acquire(node, attempt, node_timeout_, std::move(done));
        },
        vote_owner_action,
        [self = shared_from_this()](RoundResult& round) { self->on_attempt(round); },
        {.quorum = kind_.quorum(), .abandon_stragglers_within = node_timeout_});
  }

  void on_attempt(RoundResult& round) {
    last_round_ = std::move(round);
    auto& decided = *last_round_;
    // Stopped or closed while the attempt was on the wire: what it got is released.
    if (machine_.done()) return release_leftovers();
    if (decided.cancelled && !engine_->open()) {
      observe_attempt(*engine_, kind_.key(), machine_.attempts(), decided,
                      make_error_code(errc::cancelled), machine_.started());
      return act(machine_.close());
    }
    core::AttemptFacts facts;
    facts.decision = decided.decision;
    facts.failure = decided.failure;
    facts.started = decided.start;
    facts.wrong_kind = wrong_kind_error(decided, [] { return std::string(); }).has_value();
    facts.protocol_error =
        decided.reached() && options_.fencing && kind_.token_count_mismatch(decided);
    if (!decided.reached() && watch_id_) read_waiting_facts(decided, facts);
    const auto now = Clock::now();
    const auto action = machine_.attempt_decided(facts, now, engine_->accepting());
    if (action.step == Step::sleep || action.step == Step::give_up) {
      const auto cause = action.step == Step::give_up ? action.cause : machine_.last_failure();
      observe_attempt(*engine_, kind_.key(), machine_.attempts(), decided,
                      make_error_code(code_of(cause)), machine_.started());
      error_ = attempt_error(cause, decided, now);
    }
    act(action);
  }

  // What the waiter queue and the refusals say, for the retry schedule.
  void read_waiting_facts(const RoundResult& round, core::AttemptFacts& facts) {
    auto holder = kind_.holder_on_quorum(round);
    facts.holder_on_quorum = holder.on_quorum;
    facts.holder_expires_in = holder.expires_in;
    const bool holder_seen = holder.on_quorum && holder.expires_in && kind_.sleeps_on_holder();
    facts.leaving =
        holder.on_quorum && engine_->notifier().announced_released(*watch_id_, holder.value);
    facts.holder = std::move(holder.value);
    facts.announced_in_flight = round.failure == core::FailureKind::contention &&
                                engine_->notifier().attempt_failed(*watch_id_, holder_seen);
    if (round.failure != core::FailureKind::contention) {
      engine_->notifier().attempt_failed(*watch_id_, false);
    }
    facts.others_waiting_before = engine_->notifier().others_waiting_before(*watch_id_);
    if (!holder.on_quorum) {
      facts.split_clears_in = round.split_clears_in();
      facts.orders_first = round.orders_first(value_);
    }
  }

  // Step 3 of the fencing design (docs/fencing.md): before the token is handed out, every
  // granted node's counter is raised to it, so any later holder (whose quorum intersects
  // ours) gets a larger one even if a minority node's counter was inflated.
  void send_write_back() {
    run_round(
        *engine_,
        [&](Node& node, NodeCallback done) {
          kind_.send_write_back(node, value_, *last_round_, node_timeout_, std::move(done));
        },
        vote_owner_action,
        [self = shared_from_this()](RoundResult& fenced) { self->on_write_back(fenced); },
        {.quorum = kind_.quorum()});
  }

  void on_write_back(RoundResult& fenced) {
    if (fenced.cancelled && !engine_->open()) return act(machine_.close());
    const auto now = Clock::now();
    const auto action =
        machine_.write_back_decided(fenced.decision, fenced.failure, now, engine_->accepting());
    if (action.step == Step::sleep || action.step == Step::give_up) {
      const auto cause = action.step == Step::give_up ? action.cause : machine_.last_failure();
      if (cause == AcquireCause::unreachable || cause == AcquireCause::write_back_failed) {
        auto message = kind_.describe() + " not acquired: the fencing token write-back failed: " +
                       fenced.summary("confirmed");
        error_ = Error(make_error_code(code_of(cause)), std::move(message), fenced.outcomes);
      } else if (last_round_) {
        error_ = attempt_error(cause, *last_round_, now);
      }
      if (last_round_) {
        observe_attempt(*engine_, kind_.key(), machine_.attempts(), *last_round_,
                        make_error_code(code_of(cause)), machine_.started());
      }
      if (action.step == Step::sleep && watch_id_) {
        engine_->notifier().attempt_failed(*watch_id_, false);
      }
    }
    act(action);
  }

  Error attempt_error(AcquireCause cause, const RoundResult& round, Clock::time_point now) const {
    switch (cause) {
      case AcquireCause::wrong_kind:
        if (auto wrong = wrong_kind_error(round, [&] { return kind_.describe(); })) return *wrong;
        break;
      case AcquireCause::validity_expired:
        return Error(make_error_code(errc::validity_expired),
                     kind_.describe() + " not acquired: a quorum agreed after " +
                         elapsed_ms(round.start, now) + ", leaving no validity of the " +
                         std::to_string(options_.ttl.count()) + " ms ttl",
                     round.outcomes);
      case AcquireCause::protocol_error:
        return Error(make_error_code(errc::protocol_error),
                     kind_.describe() + " not acquired: the nodes' grants carried " +
                         std::to_string(round.max_tokens.size()) + " fencing tokens for " +
                         std::to_string(kind_.key_count()) + " keys",
                     round.outcomes);
      case AcquireCause::stopped:
      case AcquireCause::closed:
        return closed_or_stopped(cause);
      default:
        break;
    }
    auto message = kind_.describe() + " not acquired: " + round.summary("granted");
    if (round.no_node_answered()) {
      message += "; no node answered within " + std::to_string(node_timeout_.count()) +
                 " ms: is node_timeout below the round trip to the nodes?";
    }
    return Error(make_error_code(code_of(cause)), std::move(message), round.outcomes);
  }

  Error closed_or_stopped(AcquireCause cause) const {
    if (cause == AcquireCause::stopped) {
      return Error(make_error_code(errc::cancelled),
                   kind_.describe() + ": cancelled by the caller's stop token");
    }
    return cancelled_error(kind_.describe());
  }

  // A failed attempt may have left its value on nodes that granted, did not answer in
  // time, or answered after the decision; a node that reported another holder did not.
  // The release is not awaited: a caller that gives up does not wait for it, and a retry
  // is queued behind it on each node's connection. An attempt whose value may sit on a
  // quorum may be the holder other clients' waiters saw, so its release is announced;
  // split votes stay unannounced (node.hpp, Announce). A writer's intent stays while it
  // waits (it keeps new readers out). A closing client waits for these releases on the
  // nodes that answered the attempt, not on one that did not (Client::close()).
  void release_leftovers() {
    if (!last_round_) return;
    // Moved out before anything is sent: the attempt is over, and a reference into
    // last_round_ would dangle once it is reset.
    const RoundResult round = std::move(*last_round_);
    last_round_.reset();
    const std::string value = std::move(value_);
    if (!engine_->open() || value.empty()) return;
    auto& nodes = engine_->nodes();
    const auto announce = round.may_hold_quorum() ? Announce::yes : Announce::no;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const auto& outcome = round.outcomes[i];
      if (outcome.status == NodeStatus::held || outcome.error == errc::wrong_kind) continue;
      const bool answered =
          outcome.status != NodeStatus::pending && outcome.status != NodeStatus::timeout;
      kind_.send_release(
          *nodes[i], value, announce, node_timeout_,
          answered ? engine_->count_release([](NodeReply) {}) : [](NodeReply) {},
          /*keep_intent=*/true);
    }
  }

  void hand_out(Clock::time_point valid_until) {
    auto& round = *last_round_;
    const auto acquired_at = round.start;
    observe_attempt(*engine_, kind_.key(), machine_.attempts(), round, {}, machine_.started());
    auto state = std::allocate_shared<LockState>(RecyclingAllocator<LockState>());
    state->engine = engine_;
    if (options_.fencing) kind_.tokens_of(round, state->token, state->tokens);
    state->kind = std::move(kind_);  // the acquisition's last use of it
    state->value = std::move(value_);
    state->nodes = std::move(round.outcomes);
    last_round_.reset();
    state->set_ttl(options_.ttl);
    state->extend_every = options_.extend_every;
    state->set_valid_until(valid_until);
    state->hold = HoldLimit::of(options_, acquired_at);
    if (options_.auto_extend) start_watchdog(state, options_.on_lost);
    finish(std::move(state));
  }

  void give_up(const AcquireAction& action) {
    // A writer that attempted left its intent on the nodes; one that never did has none.
    if (machine_.attempts() > 0) kind_.withdraw_intent(*engine_, node_timeout_);
    Error error =
        action.cause == AcquireCause::stopped || action.cause == AcquireCause::closed || !error_
            ? closed_or_stopped(action.cause)
            : std::move(*error_);
    if (action.attempts > 1 && action.cause != AcquireCause::stopped &&
        action.cause != AcquireCause::closed) {
      error = Error(error.code(),
                    error.message() + " (after " + std::to_string(action.attempts) +
                        " attempts in " + elapsed_ms(machine_.started(), Clock::now()) + ")",
                    error.nodes());
    }
    finish(std::move(error));
  }

  void finish(Result<std::shared_ptr<LockState>> result) {
    if (finished_) return;
    finished_ = true;
    const Kind& kind = result ? (*result)->kind : kind_;
    observe_acquire(*engine_, kind.key(), machine_.attempts(),
                    result ? std::error_code() : result.error().code(), machine_.started());
    stop_link_.reset();
    // Leaving the queue may pass a wake this waiter held to the next one (a reader that
    // got in passes it as if it had not: the next reader can share the lock too).
    if (watch_id_) {
      engine_->notifier().unwatch(*watch_id_, result.has_value() && kind.keeps_wake());
    }
    if (timer_) {
      timer_.reset();
      engine_->untrack(this);
    }
    auto done = std::move(done_);
    done(std::move(result));
  }

  std::shared_ptr<Engine> engine_;
  Kind kind_;
  LockOptions options_;
  AcquireDone done_;
  milliseconds node_timeout_;
  core::Acquisition machine_;
  net::TimerPtr timer_;  // only when waiting; closed in finish()
  std::optional<ReleaseNotifier::WaiterId> watch_id_;
  std::string value_;                      // of the attempt on the wire or just decided
  std::optional<RoundResult> last_round_;  // the attempt just decided, until acted on
  std::optional<Error> error_;             // of the last failed attempt
  bool finished_ = false;
  StopLink stop_link_;  // LockOptions::stop, until finish()
};

}  // namespace

void start_acquire(const std::shared_ptr<Engine>& engine, Kind kind, LockOptions options,
                   AcquireDone done) {
  std::allocate_shared<AcquireOperation>(RecyclingAllocator<AcquireOperation>(), engine,
                                         std::move(kind), std::move(options), std::move(done))
      ->start();
}

}  // namespace redlock::detail

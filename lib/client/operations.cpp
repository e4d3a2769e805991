#include "client/operations.hpp"

#include "client/engine.hpp"
#include "client/family/held.hpp"
#include "client/observe.hpp"
#include "client/round.hpp"
#include "client/stop_link.hpp"
#include "client/timer.hpp"
#include "client/watchdog.hpp"
#include "core/lock_value.hpp"
#include "core/retry.hpp"
#include "core/validity.hpp"

namespace redlock::detail {

using core::Clock;
using std::chrono::milliseconds;

milliseconds diagnostic_timeout(const Engine& engine) {
  const auto configured = engine.options().node_timeout;
  return configured.count() > 0 ? configured : milliseconds(200);
}

std::string quote_key(std::string_view key) {
  constexpr std::size_t shown = 64;
  std::string text = "\"";
  // Keys are binary. A NUL would cut the message short wherever it is handled as a C
  // string, and other control bytes garble logs, so they (and the quoting characters)
  // are written as \xNN; UTF-8 names stay readable.
  for (const char c : key.substr(0, shown)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f || c == '"' || c == '\\') {
      static constexpr char hex[] = "0123456789abcdef";
      text += "\\x";
      text += hex[byte >> 4];
      text += hex[byte & 15];
    } else {
      text += c;
    }
  }
  text += key.size() > shown ? "...\" (" + std::to_string(key.size()) + " bytes)" : "\"";
  return text;
}

Released released_from(const std::vector<NodeOutcome>& outcomes) {
  Released released;
  for (const auto& outcome : outcomes) {
    if (outcome.status == NodeStatus::granted) ++released.deleted;
  }
  if (released.deleted == 0) released.outcomes = outcomes;
  return released;
}

Error cancelled_error(std::string_view what) {
  return Error(make_error_code(errc::cancelled), std::string(what) + ": the client closed");
}

namespace {

std::string elapsed_ms(Clock::time_point since, Clock::time_point now) {
  return std::to_string(std::chrono::duration_cast<milliseconds>(now - since).count()) + " ms";
}

/// A failed attempt may still have set our value on nodes that granted, did not answer
/// in time, or answered after the decision; a node that reported another holder did
/// not. The release is not awaited: a caller that gives up does not wait for it, and a
/// retry is queued behind it on each node's connection, so it reaches every node first.
///
/// An attempt whose value may sit on a quorum (it reached one and failed afterwards: no
/// validity left, the fencing write-back failed, the client began closing; or the
/// replies came too late to count) may be the holder other clients' waiters saw; its
/// release is announced so they do not sleep until its TTL would have ended. Split
/// votes, where other holders answered on more than a minority, stay unannounced
/// (node.hpp, Announce).
void release_leftovers(Engine& engine, const std::string& key, const std::string& value,
                       const RoundResult& round, milliseconds timeout) {
  if (!engine.open()) return;
  auto& nodes = engine.nodes();
  const auto announce = round.may_hold_quorum() ? Announce::yes : Announce::no;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    if (round.outcomes[i].status == NodeStatus::held) continue;
    nodes[i]->release(key, value, announce, timeout, engine.count_release([](NodeReply) {}));
  }
}

/// A deadline `wait` after `start`, saturated: milliseconds::max() waits without end.
Clock::time_point wait_deadline(Clock::time_point start, milliseconds wait) {
  if (wait >= std::chrono::duration_cast<milliseconds>(Clock::time_point::max() - start)) {
    return Clock::time_point::max();
  }
  return start + wait;
}

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

class AcquireOperation final : public Cancellable,
                               public std::enable_shared_from_this<AcquireOperation> {
 public:
  AcquireOperation(std::shared_ptr<Engine> engine, std::string key, LockOptions options,
                   AcquireDone done)
      : engine_(std::move(engine)),
        key_(std::move(key)),
        options_(std::move(options)),
        done_(std::move(done)),
        started_(Clock::now()),
        schedule_({engine_->options().retry_delay, engine_->options().retry_jitter,
                   options_.max_attempts},
                  wait_deadline(started_, options_.wait), engine_->borrowed_random()),
        node_timeout_(engine_->node_timeout(options_.ttl)) {}

  void start() {
    if (options_.stop.stop_possible()) {
      if (options_.stop.stop_requested()) return finish(stopped_error());
      std::weak_ptr<AcquireOperation> weak = shared_from_this();
      stop_link_.link(engine_, options_.stop, [weak] {
        if (auto self = weak.lock()) self->finish(self->stopped_error());
      });
    }
    if (options_.wait.count() == 0) return attempt();
    timer_ = Timer::create(engine_->loop());
    engine_->track(shared_from_this());
    if (finished_) return;  // the engine was already closing
    // Subscribed before the first attempt, so a release between a failed attempt and
    // the wait cannot be missed.
    std::weak_ptr<AcquireOperation> weak = shared_from_this();
    const auto watched = engine_->notifier().watch(
        key_,
        [weak] {
          if (auto self = weak.lock()) self->on_woken();
        },
        [weak] {
          if (auto self = weak.lock(); self && !self->finished_) self->first_attempt();
        });
    watch_id_ = watched.id;
    if (watched.ready) first_attempt();
  }

  void cancel() override { finish(cancelled_error("lock " + quote_key(key_))); }

  Error stopped_error() const {
    return Error(make_error_code(errc::cancelled),
                 "lock " + quote_key(key_) + ": cancelled by the caller's stop token");
  }

 private:
  // A release was announced and this waiter's turn came (it is idle: its last attempt
  // failed). It holds the wake until its attempt ends; giving up instead passes it on.
  void on_woken() {
    if (finished_ || !engine_->accepting()) return;
    // No attempt starts after the deadline (the timer's last one is due at it).
    const auto now = Clock::now();
    if (now >= schedule_.deadline() && last_error_) return give_up(std::move(*last_error_), now);
    timer_->stop();
    observe_wake(*engine_, key_, WakeCause::announcement, started_);
    // A release changed the key: a split vote or a leaving holder met now is a new one,
    // with its own order and its first quick look (core::split_vote_retry,
    // core::leaving_holder_retry), whatever the attempts before it met.
    split_streak_ = 0;
    leaving_streak_ = 0;
    attempt();
  }

  void first_attempt() {
    if (attempts_ > 0) return;
    // Other lock() calls of this client already wait for the key: the next release wakes
    // the oldest of them, and an attempt now would only race it and lose (one script
    // call per node for nothing at each handoff of a hot key). So this one queues behind
    // them, woken in its turn, its retry timer still running in case no wake comes.
    if (engine_->accepting() && engine_->notifier().others_waiting_before(*watch_id_)) {
      engine_->notifier().wait_for_turn(*watch_id_);
      const auto now = Clock::now();
      if (auto next = schedule_.next_attempt(0, now)) {
        return timer_->start(std::chrono::ceil<milliseconds>(*next - now),
                             [self = shared_from_this()] {
                               if (!self->finished_) self->attempt();
                             });
      }
    }
    attempt();
  }

  void attempt() {
    if (!engine_->accepting()) return finish(cancelled_error("lock " + quote_key(key_)));
    ++attempts_;
    if (watch_id_) engine_->notifier().attempt_started(*watch_id_);
    attempt_value_ = core::new_lock_value();
    // A waiter sleeps until a single holder's key can expire, so it needs that TTL with
    // each refusal; a single attempt only reports it.
    const auto holder_ttl = timer_ ? HolderTtl::with_attempt : HolderTtl::after_refusal;
    run_round(
        *engine_,
        [&](Node& node, NodeCallback done) {
          node.acquire(key_, attempt_value_, options_.ttl, options_.fencing, holder_ttl,
                       node_timeout_, std::move(done));
        },
        vote_owner_action,
        // The value stays in the operation (one round at a time): the closure holds only
        // the operation.
        [self = shared_from_this()](RoundResult& round) {
          self->on_acquire_round(std::move(round));
        });
  }

  void on_acquire_round(RoundResult round) {
    std::string value = std::move(attempt_value_);
    // Cancelled while the attempt was on the wire: what it got is released.
    if (finished_) return release_leftovers(*engine_, key_, value, round, node_timeout_);
    if (round.cancelled && !engine_->open())
      observe_attempt(*engine_, key_, attempts_, round, make_error_code(errc::cancelled), started_);
    if (round.cancelled && !engine_->open())
      return finish(cancelled_error("lock " + quote_key(key_)));
    if (auto wrong = wrong_kind_error(round, [&] { return "lock " + quote_key(key_); })) {
      release_leftovers(*engine_, key_, value, round, node_timeout_);
      return finish(std::move(*wrong));
    }
    if (!round.reached()) {
      const auto code = round.failure == core::FailureKind::unreachable ? errc::quorum_unreachable
                                                                        : errc::conflict;
      return attempt_failed(round_error(code, "lock " + quote_key(key_) + " not acquired: ", round,
                                        "granted", node_timeout_),
                            value, round);
    }
    if (!engine_->accepting()) {
      // The client began closing while this round was out: the lock is not handed to a
      // caller of a closed client, and what the round got is released.
      return attempt_failed(cancelled_error("lock " + quote_key(key_)), value, round);
    }
    if (options_.fencing && !engine_->seams().skip_fencing_write_back) {
      return write_back_token(std::move(round), std::move(value));
    }
    if (options_.fencing) {
      const auto token = round.max_token;
      return succeed(std::move(round), std::move(value), token);
    }
    succeed(std::move(round), std::move(value), std::nullopt);
  }

  // Step 3 of the fencing design: before the token is handed out, every granted node's
  // counter is raised to it, so any later holder (whose quorum intersects ours) gets a
  // larger one even if a minority node's counter was inflated by failed attempts.
  void write_back_token(RoundResult acquired, std::string value) {
    const std::uint64_t token = acquired.max_token;
    auto acquired_shared = std::make_shared<RoundResult>(std::move(acquired));
    run_round(
        *engine_,
        [&](Node& node, NodeCallback done) {
          node.fence(key_, value, token, node_timeout_, std::move(done));
        },
        vote_owner_action,
        [self = shared_from_this(), acquired_shared, value, token](RoundResult& fenced) mutable {
          if (self->finished_) {
            return release_leftovers(*self->engine_, self->key_, value, *acquired_shared,
                                     self->node_timeout_);
          }
          if (fenced.cancelled && !self->engine_->open()) {
            return self->finish(cancelled_error("lock " + quote_key(self->key_)));
          }
          if (!fenced.reached()) {
            const auto code = fenced.failure == core::FailureKind::unreachable
                                  ? errc::quorum_unreachable
                                  : errc::validity_expired;
            auto message = "lock " + quote_key(self->key_) +
                           " not acquired: the fencing token write-back failed: " +
                           fenced.summary("confirmed");
            return self->attempt_failed(
                Error(make_error_code(code), std::move(message), fenced.outcomes), value,
                *acquired_shared);
          }
          self->succeed(std::move(*acquired_shared), std::move(value), token);
        });
  }

  void succeed(RoundResult round, std::string value, std::optional<std::uint64_t> token) {
    const auto now = Clock::now();
    // Validity counts from the attempt's start, through the fencing round if any.
    const auto valid_until = core::valid_until(round.start, options_.ttl, engine_->drift());
    if (valid_until <= now) {
      auto message = "lock " + quote_key(key_) + " not acquired: a quorum agreed after " +
                     elapsed_ms(round.start, now) + ", leaving no validity of the " +
                     std::to_string(options_.ttl.count()) + " ms ttl";
      return attempt_failed(
          Error(make_error_code(errc::validity_expired), std::move(message), round.outcomes), value,
          round);
    }
    observe_attempt(*engine_, key_, attempts_, round, {}, started_);
    auto state = std::make_shared<LockState>();
    state->engine = engine_;
    // The operation ends here (finish() reads the key from the state): moved, not copied.
    state->resource = std::move(key_);
    state->value = std::move(value);
    state->token = token;
    state->nodes = std::move(round.outcomes);
    state->set_ttl(options_.ttl);
    state->extend_every = options_.extend_every;
    state->set_valid_until(valid_until);
    state->hold = HoldLimit::of(options_, round.start);
    if (options_.auto_extend) start_watchdog(state, options_.on_lost);
    finish(std::move(state));
  }

  void attempt_failed(Error error, const std::string& value, const RoundResult& round) {
    observe_attempt(*engine_, key_, attempts_, round, error.code(), started_);
    release_leftovers(*engine_, key_, value, round, node_timeout_);
    if (!engine_->accepting()) return finish(cancelled_error("lock " + quote_key(key_)));
    const auto now = Clock::now();
    if (options_.fail_fast && error == errc::quorum_unreachable)
      return give_up(std::move(error), now);
    std::optional<Clock::time_point> next;
    if (timer_) {
      // Only one other owner's release announces again; any other failure hands the wake
      // (if this attempt held it) to the next waiter.
      auto holder_ttl = round.single_holder_ttl();
      // Refused by a holder whose release was already announced: it is leaving (that
      // release had not reached these nodes yet) and will announce nothing new. It still
      // counts as a holder for the wake: handing the wake on would only send the next
      // waiter into the same refusal, and so on down the queue.
      const bool holder_seen = holder_ttl.has_value();
      const bool leaving =
          holder_seen && watch_id_ &&
          engine_->notifier().announced_released(*watch_id_, round.single_holder());
      if (leaving) holder_ttl.reset();
      leaving_streak_ = leaving ? core::next_streak(leaving_streak_) : 0;
      const bool split =
          !holder_seen && !round.reached() && round.failure == core::FailureKind::contention;
      split_streak_ = split ? core::next_streak(split_streak_) : 0;
      if (watch_id_ && engine_->notifier().attempt_failed(*watch_id_, holder_seen)) {
        // A release was announced while attempts were in flight: try again at once.
        next = schedule_.next_attempt(attempts_, now, std::chrono::milliseconds(0));
        if (next) next = now;
      } else {
        // Subscribed: sleep until a single holder's key can expire; the release
        // announcement wakes us sooner. A leaving holder, a holder that may never
        // announce and a split vote each have a sooner look of their own (below).
        next = schedule_.next_attempt(attempts_, now, watch_id_ ? holder_ttl : std::nullopt);
        const auto round_trip = std::chrono::ceil<milliseconds>(now - round.start);
        if (next && leaving) {
          next = std::min(*next, now + core::leaving_holder_retry(leaving_streak_, node_timeout_,
                                                                  round_trip, engine_->random()()));
        } else if (next && holder_ttl && watch_id_ &&
                   !engine_->notifier().others_waiting_before(*watch_id_)) {
          next = std::min(*next, now + recheck_delay(round));
        } else if (next && split) {
          // A split vote, announced by nobody. Contenders of several clients woken by one
          // announcement split the nodes and each deletes what it got at once: the one
          // whose value orders first tries again as soon as the others' deletes can have
          // landed, so the key is not left free for a polling client of another library.
          // Other clients' entries (npm `redlock` keeps a failed attempt's) go only when
          // they expire: trying again the moment they leave a quorum free makes this
          // waiter the first on the freed nodes instead of the last.
          if (auto clears = round.split_clears_in()) next = std::min(*next, now + *clears);
          if (watch_id_ && !engine_->notifier().others_waiting_before(*watch_id_)) {
            next = std::min(*next, now + core::split_vote_retry(
                                             split_streak_, node_timeout_, round_trip,
                                             round.orders_first(value), engine_->random()()));
          }
        }
      }
    }
    if (!next) return give_up(std::move(error), now);
    last_error_ = std::move(error);
    timer_->start(std::chrono::ceil<milliseconds>(*next - now), [self = shared_from_this()] {
      if (!self->finished_)
        observe_wake(*self->engine_, self->key_, WakeCause::timer, self->started_);
      if (!self->finished_) self->attempt();
    });
  }

  // Holders that never announce their release (other Redlock libraries, a process whose
  // key was deleted by hand) would otherwise keep this client's waiters asleep until the
  // holder's key could expire. So the head waiter of the key (the others queue behind it)
  // looks again after half the retry_delay, plus up to half that again at random, while
  // it sees a new holder each time (holders that come and go without a word), and backs
  // off, doubling up to a second, while the same holder stays (a long hold costs a few
  // commands, not a stream of them). An announced release still wakes it at once.
  milliseconds recheck_delay(const RoundResult& round) {
    constexpr milliseconds longest_recheck{1000};
    const auto shortest = std::max(engine_->options().retry_delay / 2, milliseconds(1));
    const std::string holder = round.single_holder();
    if (holder == last_holder_seen_) {
      recheck_ = std::min(std::max(recheck_ * 2, shortest), std::max(longest_recheck, shortest));
    } else {
      recheck_ = shortest;
      last_holder_seen_ = holder;
    }
    const auto spread = static_cast<std::uint64_t>(recheck_.count() / 2 + 1);
    return recheck_ + milliseconds(engine_->random()() % spread);
  }

  void give_up(Error error, Clock::time_point now) {
    if (attempts_ > 1) {
      error = Error(error.code(),
                    error.message() + " (after " + std::to_string(attempts_) + " attempts in " +
                        elapsed_ms(started_, now) + ")",
                    error.nodes());
    }
    finish(std::move(error));
  }

  void finish(Result<std::shared_ptr<LockState>> result) {
    if (finished_) return;
    finished_ = true;
    const std::string& key = result ? (*result)->resource : key_;
    observe_acquire(*engine_, key, attempts_, result ? std::error_code() : result.error().code(),
                    started_);
    stop_link_.reset();
    // Leaving the queue may pass a wake this waiter held to the next one.
    if (watch_id_) engine_->notifier().unwatch(*watch_id_, result.has_value());
    if (timer_) {
      timer_.reset();
      engine_->untrack(this);
    }
    auto done = std::move(done_);
    done(std::move(result));
  }

  std::shared_ptr<Engine> engine_;
  std::string key_;
  LockOptions options_;
  AcquireDone done_;
  Clock::time_point started_;
  core::RetrySchedule schedule_;
  milliseconds node_timeout_;
  TimerPtr timer_;  // only when waiting; closed in finish()
  std::optional<ReleaseNotifier::WaiterId> watch_id_;
  int attempts_ = 0;
  std::string attempt_value_;        // of the attempt on the wire, until its round is decided
  std::optional<Error> last_error_;  // of the last failed attempt, while waiting for the next
  std::string last_holder_seen_;     // the holder the last failed attempt saw, if one
  milliseconds recheck_{0};
  int leaving_streak_ = 0;  // consecutive refusals by holders announced as released
  int split_streak_ = 0;    // consecutive split votes
  bool finished_ = false;
  StopLink stop_link_;  // LockOptions::stop, until finish()
};

}  // namespace

void start_acquire(const std::shared_ptr<Engine>& engine, std::string key, LockOptions options,
                   AcquireDone done) {
  auto operation = std::make_shared<AcquireOperation>(engine, std::move(key), std::move(options),
                                                      std::move(done));
  operation->start();
}

void start_extend(const std::shared_ptr<Engine>& engine, std::string key, std::string value,
                  milliseconds ttl, ExtendDone done) {
  if (!engine->accepting()) return done(cancelled_error("extend " + quote_key(key)));
  const auto timeout = engine->node_timeout(ttl);
  run_round(
      *engine,
      [&](Node& node, NodeCallback reply) {
        node.extend(key, value, ttl, timeout, std::move(reply));
      },
      vote_owner_action,
      [engine, key, ttl, timeout, done = std::move(done)](RoundResult& round) {
        observe_lock(*engine, key, LockOperation::extend, round);
        if (round.cancelled && !engine->open())
          return done(cancelled_error("extend " + quote_key(key)));
        if (!round.reached()) {
          const auto code = round.failure == core::FailureKind::unreachable
                                ? errc::quorum_unreachable
                                : errc::not_held;
          return done(round_error(code, "extend " + quote_key(key) + " failed: ", round, "extended",
                                  timeout));
        }
        const auto valid_until = core::valid_until(round.start, ttl, engine->drift());
        if (valid_until <= Clock::now()) {
          auto message = "extend " + quote_key(key) + ": a quorum extended after " +
                         elapsed_ms(round.start, Clock::now()) + ", leaving no validity";
          return done(Error(make_error_code(errc::validity_expired), std::move(message),
                            std::move(round.outcomes)));
        }
        done(valid_until);
      });
}

void start_release(const std::shared_ptr<Engine>& engine, std::string key, std::string value,
                   milliseconds node_timeout, ReleaseDone done) {
  auto names =
      std::make_shared<const std::pair<std::string, std::string>>(std::move(key), std::move(value));
  start_release(engine, names, names->first, names->second, node_timeout, std::move(done));
}

void start_release(const std::shared_ptr<Engine>& engine, std::shared_ptr<const void> keeper,
                   const std::string& key, const std::string& value, milliseconds node_timeout,
                   ReleaseDone done) {
  run_round(
      *engine,
      [&](Node& node, NodeCallback reply) {
        node.release(key, value, Announce::yes, node_timeout, std::move(reply));
      },
      vote_gone,
      [engine, keeper, key = &key, done = std::move(done)](RoundResult& round) {
        observe_lock(*engine, *key, LockOperation::release, round);
        if (round.cancelled && !engine->open())
          return done(cancelled_error("release " + quote_key(*key)));
        if (!round.reached()) {
          auto message = "release " + quote_key(*key) +
                         " not confirmed: " + round.summary("confirmed") +
                         "; the lock may stay held there until its ttl ends";
          return done(Error(make_error_code(errc::quorum_unreachable), std::move(message),
                            std::move(round.outcomes)));
        }
        done(released_from(round.outcomes));
      },
      0, /*wait_for_all=*/false, /*counts_releases=*/true);
  // After the sends: a waiter of this client woken now has its acquire queued behind
  // the release on every connection.
  if (auto* notifier = engine->notifier_if_started(); notifier != nullptr && engine->open()) {
    notifier->released_locally(key, value);
  }
}

void start_status(const std::shared_ptr<Engine>& engine, std::string key, milliseconds node_timeout,
                  StatusDone done) {
  run_round(
      *engine,
      [&](Node& node, NodeCallback reply) { node.inspect(key, node_timeout, std::move(reply)); },
      vote_owner_action,
      [engine, key, done = std::move(done)](RoundResult& round) {
        if (round.cancelled && !engine->open())
          return done(cancelled_error("status " + quote_key(key)));
        done(std::move(round.outcomes));
      },
      0, /*wait_for_all=*/true);
}

}  // namespace redlock::detail

#include "core/acquisition.hpp"

#include <algorithm>

namespace redlock::core {

using std::chrono::milliseconds;

Clock::time_point wait_deadline(Clock::time_point start, milliseconds wait) {
  if (wait.count() < 0) return start;
  if (wait >= std::chrono::duration_cast<milliseconds>(Clock::time_point::max() - start)) {
    return Clock::time_point::max();
  }
  return start + wait;
}

milliseconds unreachable_retry(int streak, const RetryPolicy& policy, std::uint64_t random) {
  constexpr milliseconds longest{1000};
  const auto base = std::max(policy.delay, milliseconds(1));
  // The second half of the span at random: never sooner than half the retry delay, and a
  // fleet of waiters that met the same outage spreads out.
  const Backoff unreachable{base, std::max(longest, base), Jitter::upper_half, {}, milliseconds(1)};
  return unreachable.delay(streak, random);
}

Acquisition::Acquisition(Config config, Clock::time_point now, RandomSource random)
    : config_(std::move(config)),
      started_(now),
      schedule_(config_.retry, wait_deadline(now, config_.wait), random),
      random_(std::move(random)),
      waits_(config_.wait.count() > 0) {}

AcquireAction Acquisition::start(Clock::time_point now, bool stop_requested, bool accepting,
                                 bool others_waiting) {
  if (state_ != State::idle) return {};
  if (stop_requested) return give_up(AcquireCause::stopped, false);
  if (!accepting) return give_up(AcquireCause::closed, false);
  if (waits_ && others_waiting) {
    // Queued behind this client's earlier waiters: a release wakes them in turn, and an
    // attempt now would only race them. The timer still runs in case no wake comes.
    if (auto next = schedule_.next_attempt(0, now)) {
      state_ = State::sleeping;
      AcquireAction action;
      action.step = AcquireAction::Step::sleep;
      action.until = *next;
      return action;
    }
  }
  return send_attempt();
}

AcquireAction Acquisition::send_attempt() {
  state_ = State::attempting;
  ++attempts_;
  AcquireAction action;
  action.step = AcquireAction::Step::send_attempt;
  return action;
}

AcquireAction Acquisition::give_up(AcquireCause cause, bool release_attempt) {
  state_ = State::done;
  AcquireAction action;
  action.step = AcquireAction::Step::give_up;
  action.cause = cause;
  action.release_attempt = release_attempt;
  action.attempts = attempts_;
  return action;
}

AcquireAction Acquisition::attempt_decided(const AttemptFacts& facts, Clock::time_point now,
                                           bool accepting) {
  AcquireAction ended;
  ended.release_attempt = true;
  // Stopped or closed while the attempt was on the wire: what it got is released.
  if (state_ != State::attempting) return ended;
  attempt_started_ = facts.started;
  if (facts.wrong_kind) return give_up(AcquireCause::wrong_kind, true);
  if (facts.protocol_error) return give_up(AcquireCause::protocol_error, true);
  if (facts.decision != Decision::reached) {
    const auto cause = facts.failure == FailureKind::unreachable ? AcquireCause::unreachable
                                                                 : AcquireCause::conflict;
    return attempt_failed(cause, &facts, now);
  }
  // A lock is never handed to the caller of a client that began closing.
  if (!accepting) return give_up(AcquireCause::closed, true);
  unreachable_streak_ = 0;
  if (config_.write_back) {
    state_ = State::writing_back;
    AcquireAction action;
    action.step = AcquireAction::Step::send_write_back;
    return action;
  }
  return hand_out_or_retry(now);
}

AcquireAction Acquisition::write_back_decided(Decision decision, FailureKind failure,
                                              Clock::time_point now, bool accepting) {
  AcquireAction ended;
  ended.release_attempt = true;
  if (state_ != State::writing_back) return ended;
  if (decision != Decision::reached) {
    const auto cause = failure == FailureKind::unreachable ? AcquireCause::unreachable
                                                           : AcquireCause::write_back_failed;
    return attempt_failed(cause, nullptr, now);
  }
  if (!accepting) return give_up(AcquireCause::closed, true);
  return hand_out_or_retry(now);
}

AcquireAction Acquisition::hand_out_or_retry(Clock::time_point now) {
  // Validity counts from the attempt's start, through the write-back if any.
  const auto until = valid_until(attempt_started_, config_.ttl, config_.drift);
  if (!still_valid(until, now)) return attempt_failed(AcquireCause::validity_expired, nullptr, now);
  state_ = State::done;
  AcquireAction action;
  action.step = AcquireAction::Step::hand_out;
  action.valid_until = until;
  action.attempts = attempts_;
  return action;
}

AcquireAction Acquisition::attempt_failed(AcquireCause cause, const AttemptFacts* facts,
                                          Clock::time_point now) {
  last_failure_ = cause;
  if (cause == AcquireCause::unreachable && config_.fail_fast) return give_up(cause, true);
  if (!waits_) return give_up(cause, true);
  const auto next = next_attempt(facts, cause, now);
  if (!next) return give_up(cause, true);
  state_ = State::sleeping;
  AcquireAction action;
  action.step = AcquireAction::Step::sleep;
  action.release_attempt = true;
  action.until = *next;
  return action;
}

std::optional<Clock::time_point> Acquisition::next_attempt(const AttemptFacts* facts,
                                                           AcquireCause cause,
                                                           Clock::time_point now) {
  if (cause == AcquireCause::unreachable) {
    // No quorum reachable: whatever wakes come (our own leftovers' announcements among
    // them), the next attempt waits its back-off, or the nodes still up would get a
    // stream of commands exactly while the system is degraded.
    unreachable_streak_ = next_streak(unreachable_streak_);
    leaving_streak_ = split_streak_ = 0;
    if (!schedule_.next_attempt(attempts_, now)) return std::nullopt;
    const auto delay = unreachable_retry(unreachable_streak_, config_.retry, random_());
    return std::min(now + delay, schedule_.deadline());
  }
  unreachable_streak_ = 0;
  if (facts == nullptr || cause != AcquireCause::conflict) {
    leaving_streak_ = split_streak_ = 0;
    return schedule_.next_attempt(attempts_, now);
  }
  auto holder_ttl = config_.sleeps_on_holder && facts->holder_on_quorum
                        ? facts->holder_expires_in
                        : std::optional<milliseconds>();
  // Refused by a holder whose release was already announced: it is leaving (the release
  // had not reached these nodes yet) and will announce nothing new.
  const bool leaving = facts->holder_on_quorum && facts->leaving;
  if (leaving) holder_ttl.reset();
  leaving_streak_ = leaving ? next_streak(leaving_streak_) : 0;
  const bool split = !facts->holder_on_quorum;
  split_streak_ = split ? next_streak(split_streak_) : 0;

  std::optional<Clock::time_point> next;
  if (facts->announced_in_flight) {
    // A release was announced while the attempt was out: try again at once.
    next = schedule_.next_attempt(attempts_, now, milliseconds(0));
    if (next) next = now;
  } else {
    // Sleep until a single holder's entry can expire; its release announcement wakes us
    // sooner. A leaving holder, a holder that may never announce, and a split vote each
    // have a sooner look of their own.
    next = schedule_.next_attempt(attempts_, now, holder_ttl);
    const auto round_trip = std::chrono::ceil<milliseconds>(now - facts->started);
    if (next && leaving) {
      next = std::min(*next, now + leaving_holder_retry(leaving_streak_, config_.node_timeout,
                                                        round_trip, random_()));
    } else if (next && holder_ttl && !facts->others_waiting_before) {
      next = std::min(*next, now + recheck_delay(facts->holder));
    } else if (next && split) {
      // Contenders woken by one announcement split the nodes and each deletes what it got:
      // the one whose value orders first tries again as soon as the deletes can have
      // landed; entries of other clients that keep theirs are tried the moment they
      // leave a quorum free.
      if (facts->split_clears_in) next = std::min(*next, now + *facts->split_clears_in);
      if (!facts->others_waiting_before) {
        next = std::min(*next, now + split_vote_retry(split_streak_, config_.node_timeout,
                                                      round_trip, facts->orders_first, random_()));
      }
    }
  }
  // A waiting writer's intent keeps new readers out only while the attempts refresh it.
  if (next && config_.refresh_within) next = std::min(*next, now + *config_.refresh_within);
  return next;
}

// Holders that never announce their release (other Redlock libraries, a key deleted by
// hand) would keep a waiter asleep until the holder's entry could expire. So the head
// waiter looks again after half the retry delay (plus up to half that again) while it
// sees a new holder each time, and backs off, doubling up to a second, while the same
// holder stays: a long hold costs a few commands, not a stream of them.
milliseconds Acquisition::recheck_delay(std::string_view holder) {
  constexpr milliseconds longest_recheck{1000};
  const auto shortest = std::max(config_.retry.delay / 2, milliseconds(1));
  if (holder == last_holder_seen_) {
    same_holder_streak_ = next_streak(same_holder_streak_);
  } else {
    same_holder_streak_ = 1;
    last_holder_seen_ = std::string(holder);
  }
  const Backoff recheck{shortest, std::max(longest_recheck, shortest), Jitter::above, {}, {}};
  return recheck.delay(same_holder_streak_, random_());
}

AcquireAction Acquisition::woken(Clock::time_point now, bool accepting) {
  if (state_ != State::sleeping || !accepting) return {};
  // An announcement says a holder left; it changes nothing while no quorum is reachable.
  if (last_failure_ == AcquireCause::unreachable) return {};
  if (now >= schedule_.deadline() && last_failure_ != AcquireCause::none) {
    return give_up(last_failure_, false);
  }
  // A release changed the key: a split vote or a leaving holder met now is a new one.
  split_streak_ = leaving_streak_ = 0;
  return send_attempt();
}

AcquireAction Acquisition::timer_fired(Clock::time_point now, bool accepting) {
  (void)now;
  if (state_ != State::sleeping) return {};
  if (!accepting) return give_up(AcquireCause::closed, false);
  return send_attempt();
}

AcquireAction Acquisition::stop() {
  if (state_ == State::done) return {};
  // An attempt on the wire is released when its round comes back (attempt_decided).
  return give_up(AcquireCause::stopped, false);
}

AcquireAction Acquisition::close() {
  if (state_ == State::done) return {};
  return give_up(AcquireCause::closed, false);
}

}  // namespace redlock::core

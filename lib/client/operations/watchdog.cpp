#include "client/operations/watchdog.hpp"

#include <algorithm>

#include "client/engine/engine.hpp"
#include "client/kinds/lock_state.hpp"
#include "client/loop/user_callback.hpp"
#include "client/operations/lock_extension.hpp"
#include "client/operations/observe.hpp"
#include "core/backoff.hpp"
#include "core/validation.hpp"
#include "net/timer.hpp"

namespace redlock::detail {

using core::Clock;
using std::chrono::milliseconds;

class Watchdog final : public Cancellable, public std::enable_shared_from_this<Watchdog> {
 public:
  Watchdog(const std::shared_ptr<LockState>& lock, std::function<void(const Error&)> on_lost)
      : engine_(lock->engine),
        lock_(lock),
        on_lost_(std::move(on_lost)),
        timer_(net::Timer::create(engine_->loop())) {}

  void start() {
    engine_->track(shared_from_this());
    if (stopped_) return;
    if (auto lock = lock_.lock()) schedule_regular(*lock, Clock::now());
  }

  void cancel() override { stop(); }

  void stop() {
    if (stopped_) return;
    stopped_ = true;
    timer_.reset();
    engine_->untrack(this);
  }

 private:
  milliseconds interval(const LockState& lock) const {
    return lock.extend_every.count() > 0 ? lock.extend_every : lock.ttl() / 3;
  }

  milliseconds allowance(const LockState& lock) const {
    return core::watchdog_round_allowance(engine_->node_timeout(lock.ttl()));
  }

  // The next regular tick: one interval after the last extension, but early enough that
  // a failed round and one retry both fit before the validity ends.
  void schedule_regular(const LockState& lock, Clock::time_point last_extended) {
    const auto latest = lock.valid_until() - 2 * allowance(lock);
    schedule_at(std::min(last_extended + interval(lock), latest));
  }

  void schedule_at(Clock::time_point when) {
    const auto delay = std::chrono::ceil<milliseconds>(when - Clock::now());
    timer_->start(std::max(delay, milliseconds(0)), [self = shared_from_this()] { self->tick(); });
  }

  void tick() {
    if (stopped_) return;
    auto lock = lock_.lock();
    if (!lock || lock->released() || lock->lost) return stop();
    const auto now = Clock::now();
    if (lock->valid_until() - now <= allowance(*lock)) {
      // The loop was late (a stall) or the rounds kept failing: no round can be known to
      // have succeeded before the validity ends, and extending after it would revive an
      // expired lock.
      return lose(*lock, "no time is left for an extension round before the validity ends", {});
    }
    if (auto reason = lock->hold.refuses(now, lock->ttl())) {
      lock->lost = true;
      stop();
      const auto limit = hold_limit_error(lock->resource(), *reason, now, lock->valid_until());
      observe_watchdog(*engine_, lock->resource(), &limit, lock->valid_until());
      if (on_lost_) call_user("on_lost", on_lost_, limit);
      return;
    }
    extend_lock(lock, std::nullopt,
                [self = shared_from_this(), started = now](Result<Clock::time_point> extended) {
                  self->on_extended(std::move(extended), started);
                });
  }

  void on_extended(Result<Clock::time_point> extended, Clock::time_point started) {
    if (stopped_) return;
    auto lock = lock_.lock();
    if (!lock || lock->released()) return stop();
    if (extended) {
      observe_watchdog(*engine_, lock->resource(), nullptr, lock->valid_until());
      if (lock->hold.extensions_left > 0) --lock->hold.extensions_left;
      return schedule_regular(*lock, started);
    }
    const auto& error = extended.error();
    if (error == errc::cancelled) return stop();
    const auto now = Clock::now();
    const auto left = lock->valid_until() - now;
    const auto needed = allowance(*lock);
    if (error == errc::not_held || error == errc::lock_lost || left <= needed) {
      return lose(*lock, error.message(), error.nodes());
    }
    // Try again soon, while a round still fits: halfway to the last moment one can start.
    const auto last_start = lock->valid_until() - needed;
    schedule_at(now + core::halfway_to(last_start - now, interval(*lock)));
  }

  void lose(LockState& lock, const std::string& why, std::vector<NodeOutcome> nodes) {
    lock.lost = true;
    const auto left = core::validity_left(lock.valid_until(), Clock::now());
    Error lost(make_error_code(errc::lock_lost),
               "lock " + quote_key(lock.resource()) + " lost: " + why + " (" +
                   std::to_string(std::max<long long>(left.count(), 0)) + " ms of validity left)",
               std::move(nodes));
    stop();
    observe_watchdog(*engine_, lock.resource(), &lost, lock.valid_until());
    if (on_lost_) call_user("on_lost", on_lost_, lost);
  }

  std::shared_ptr<Engine> engine_;
  std::weak_ptr<LockState> lock_;
  std::function<void(const Error&)> on_lost_;
  net::TimerPtr timer_;  // closed in stop()
  bool stopped_ = false;
};

void start_watchdog(const std::shared_ptr<LockState>& lock,
                    std::function<void(const Error&)> on_lost) {
  auto watchdog = std::make_shared<Watchdog>(lock, std::move(on_lost));
  lock->watchdog = watchdog;
  watchdog->start();
}

void stop_watchdog(LockState& lock) {
  if (lock.watchdog) {
    lock.watchdog->stop();
    lock.watchdog.reset();
  }
}

}  // namespace redlock::detail

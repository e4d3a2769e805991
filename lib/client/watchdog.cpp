#include "client/watchdog.hpp"

#include <algorithm>

#include "client/engine.hpp"
#include "client/lock_state.hpp"
#include "client/operations.hpp"
#include "client/timer.hpp"

namespace redlock::detail {

using core::Clock;
using std::chrono::milliseconds;

class Watchdog final : public Cancellable, public std::enable_shared_from_this<Watchdog> {
 public:
  Watchdog(const std::shared_ptr<LockState>& lock, milliseconds interval,
           std::function<void(const Error&)> on_lost)
      : engine_(lock->engine),
        lock_(lock),
        interval_(interval),
        on_lost_(std::move(on_lost)),
        timer_(Timer::create(engine_->loop())) {}

  void start() {
    engine_->track(shared_from_this());
    if (!stopped_) schedule(interval_);
  }

  void cancel() override { stop(); }

  void stop() {
    if (stopped_) return;
    stopped_ = true;
    timer_->close();
    timer_ = nullptr;
    engine_->untrack(this);
  }

 private:
  void schedule(milliseconds delay) {
    timer_->start(delay, [self = shared_from_this()] { self->tick(); });
  }

  void tick() {
    auto lock = lock_.lock();
    if (!lock || lock->released || lock->lost) return stop();
    const auto round_started = Clock::now();
    start_extend(engine_, lock->resource, lock->value, lock->ttl,
                 [self = shared_from_this(), round_started](Result<Clock::time_point> extended) {
                   self->on_extended(std::move(extended), round_started);
                 });
  }

  void on_extended(Result<Clock::time_point> extended, Clock::time_point round_started) {
    if (stopped_) return;
    auto lock = lock_.lock();
    if (!lock || lock->released) return stop();
    if (extended) {
      // Extensions only move validity forward; a slow round cannot shorten it.
      if (*extended > lock->valid_until()) lock->set_valid_until(*extended);
      return schedule(interval_);
    }
    const auto& error = extended.error();
    if (error == errc::cancelled) return stop();
    const auto now = Clock::now();
    const auto left = std::chrono::floor<milliseconds>(lock->valid_until() - now);
    // Another try needs one more round (at most a node_timeout) and must finish before
    // validity ends; the round just made shows how long one takes.
    const auto round_time = std::chrono::ceil<milliseconds>(now - round_started);
    const auto needed = std::max(round_time, engine_->node_timeout(lock->ttl)) * 3;
    if (error != errc::not_held && left > needed) {
      return schedule(std::max(milliseconds(1), std::min(interval_, (left - needed) / 2)));
    }
    lock->lost = true;
    Error lost(make_error_code(errc::lock_lost),
               "lock " + quote_key(lock->resource) + " lost: " + error.message() + " (" +
                   std::to_string(std::max<long long>(left.count(), 0)) + " ms of validity left)",
               error.nodes());
    stop();
    if (on_lost_) on_lost_(lost);
  }

  std::shared_ptr<Engine> engine_;
  std::weak_ptr<LockState> lock_;
  milliseconds interval_;
  std::function<void(const Error&)> on_lost_;
  Timer* timer_;  // owned; closed in stop()
  bool stopped_ = false;
};

void start_watchdog(const std::shared_ptr<LockState>& lock, milliseconds interval,
                    std::function<void(const Error&)> on_lost) {
  auto watchdog = std::make_shared<Watchdog>(lock, interval, std::move(on_lost));
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

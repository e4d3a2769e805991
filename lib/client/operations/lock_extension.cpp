#include "client/operations/lock_extension.hpp"

#include "client/engine/engine.hpp"
#include "client/kinds/lock_state.hpp"

namespace redlock::detail {

using core::Clock;
using std::chrono::milliseconds;

namespace {

void run_next_queued(LockState& lock) {
  if (lock.extending || lock.queued_extensions.empty()) return;
  auto next = std::move(lock.queued_extensions.front());
  lock.queued_extensions.pop_front();
  next();
}

}  // namespace

void extend_lock(const std::shared_ptr<LockState>& lock, std::optional<milliseconds> requested,
                 ExtendDone done) {
  if (lock->extending) {
    lock->queued_extensions.push_back([lock, requested, done = std::move(done)]() mutable {
      extend_lock(lock, requested, std::move(done));
    });
    return;
  }
  const auto key = quote_key(lock->resource());
  if (lock->released()) {
    done(Error(make_error_code(errc::not_held), "extend " + key + ": the lock was unlocked"));
    return run_next_queued(*lock);
  }
  if (lock->lost) {
    done(
        Error(make_error_code(errc::lock_lost), "extend " + key + ": the watchdog lost this lock"));
    return run_next_queued(*lock);
  }
  const auto& engine = lock->engine;
  const auto ttl = requested.value_or(lock->ttl());
  const auto start = Clock::now();
  if (!core::still_valid(lock->valid_until(), start)) {
    // Our value may still sit on the nodes (the drift allowance), but the validity the
    // caller was promised is over (Lock::validity() says 0 from the last millisecond on):
    // extending now could revive a lock that another client was entitled to take.
    done(Error(make_error_code(errc::not_held),
               "extend " + key + ": the lock expired " +
                   std::to_string(-core::validity_left(lock->valid_until(), start).count()) +
                   " ms ago; an expired lock is never extended"));
    return run_next_queued(*lock);
  }
  lock->cap_valid_until(core::valid_until(start, ttl, engine->drift()));
  lock->extending = true;
  start_extend(*lock, ttl,
               [lock, ttl, done = std::move(done)](Result<Clock::time_point> extended) mutable {
                 lock->extending = false;
                 if (extended && !lock->released() && !lock->lost) {
                   lock->set_valid_until(*extended);
                   lock->set_ttl(ttl);
                 }
                 done(std::move(extended));
                 run_next_queued(*lock);
               });
}

}  // namespace redlock::detail

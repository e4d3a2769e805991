#include <redlock/lock.hpp>

#include "client/engine.hpp"
#include "client/lock_state.hpp"
#include "client/operations.hpp"
#include "client/sync_call.hpp"
#include "client/watchdog.hpp"
#include "core/validation.hpp"

namespace redlock {

using detail::LockState;
using std::chrono::milliseconds;

namespace {

const std::string empty_string;
const std::vector<NodeOutcome> no_outcomes;

Error not_owned_error(const LockState* state, std::string_view action) {
  if (state == nullptr) {
    return Error(make_error_code(errc::not_held),
                 std::string(action) + ": this Lock was moved from");
  }
  return Error(make_error_code(errc::not_held), std::string(action) + " " +
                                                    detail::quote_key(state->resource) +
                                                    ": the lock was already unlocked");
}

/// The release of unlock() and of the destructor: stops the watchdog and deletes our
/// value everywhere.
void start_unlock(const std::shared_ptr<LockState>& state, detail::ReleaseDone done) {
  detail::stop_watchdog(*state);
  detail::start_release(state->engine, state->resource, state->value,
                        state->engine->node_timeout(state->ttl), std::move(done));
}

}  // namespace

Lock::Lock(std::shared_ptr<detail::LockState> state) noexcept : state_(std::move(state)) {}

Lock::Lock(Lock&& other) noexcept = default;

Lock& Lock::operator=(Lock&& other) noexcept {
  if (this != &other) {
    Lock released(std::move(*this));  // our current lock, if any, is unlocked here
    state_ = std::move(other.state_);
  }
  return *this;
}

Lock::~Lock() {
  if (!state_ || state_->released.exchange(true)) return;
  auto& engine = *state_->engine;
  if (engine.on_loop_thread()) {
    // Destroyed inside a callback: cannot wait here, the release proceeds on its own.
    start_unlock(state_, [](Result<detail::Released>) {});
    return;
  }
  // Bounded: every node answers or times out within node_timeout; the margin covers
  // the hop to the loop thread. Whatever happens, the destructor does not throw.
  const auto limit = engine.node_timeout(state_->ttl) * 2 + milliseconds(100);
  (void)detail::call_sync_for<detail::Released>(
      engine, "unlock", [state = state_](auto deliver) { start_unlock(state, std::move(deliver)); },
      limit);
}

const std::string& Lock::resource() const noexcept {
  return state_ ? state_->resource : empty_string;
}
const std::string& Lock::value() const noexcept {
  return state_ ? state_->value : empty_string;
}

std::chrono::steady_clock::time_point Lock::valid_until() const noexcept {
  return state_ ? state_->valid_until() : std::chrono::steady_clock::time_point{};
}

milliseconds Lock::validity() const noexcept {
  if (!state_ || state_->released || state_->lost) return milliseconds(0);
  const auto left = core::validity_left(state_->valid_until(), core::Clock::now());
  return left.count() > 0 ? left : milliseconds(0);
}

std::optional<std::uint64_t> Lock::fencing_token() const noexcept {
  return state_ ? state_->token : std::nullopt;
}

const std::vector<NodeOutcome>& Lock::nodes() const noexcept {
  return state_ ? state_->nodes : no_outcomes;
}

bool Lock::lost() const noexcept {
  return state_ && state_->lost;
}
bool Lock::owned() const noexcept {
  return state_ && !state_->released;
}

Result<void> Lock::extend(milliseconds ttl) {
  if (!state_ || state_->released) return not_owned_error(state_.get(), "extend");
  auto& engine = *state_->engine;
  if (auto problem = core::check_ttl(ttl, engine.options().node_timeout)) {
    return Error(make_error_code(errc::invalid_argument), "extend: " + *problem);
  }
  const auto key = detail::quote_key(state_->resource);
  if (state_->lost) {
    return Error(make_error_code(errc::lock_lost),
                 "extend " + key + ": the watchdog lost this lock");
  }
  const auto now = core::Clock::now();
  if (state_->valid_until() <= now) {
    // Our value may still sit on some nodes, but the validity the caller was promised is
    // over: extending now could revive a lock someone else was entitled to take.
    return Error(make_error_code(errc::not_held),
                 "extend " + key + ": the lock expired " +
                     std::to_string(-core::validity_left(state_->valid_until(), now).count()) +
                     " ms ago; an expired lock is never extended");
  }
  auto extended = detail::call_sync<core::Clock::time_point>(
      engine, "extend", [state = state_, ttl](auto deliver) {
        detail::start_extend(state->engine, state->resource, state->value, ttl, std::move(deliver));
      });
  if (!extended) return std::move(extended).error();
  state_->set_valid_until(*extended);
  return {};
}

void Lock::unlock_async(std::function<void(Result<void>)> done) {
  if (!state_ || state_->released.exchange(true)) return done({});
  auto deliver = [done](Result<detail::Released> released) mutable {
    if (!released) return done(std::move(released).error());
    done({});
  };
  auto& engine = *state_->engine;
  if (engine.on_loop_thread()) return start_unlock(state_, std::move(deliver));
  auto shared_done = std::make_shared<detail::ReleaseDone>(std::move(deliver));
  const bool posted =
      engine.post([state = state_, shared_done] { start_unlock(state, std::move(*shared_done)); });
  if (!posted) {
    (*shared_done)(detail::cancelled_error("unlock " + detail::quote_key(state_->resource)));
  }
}

Result<void> Lock::unlock() {
  if (!state_ || state_->released.exchange(true)) return {};
  if (state_->engine->on_loop_thread()) {
    // Inside a callback nothing may wait; the release is on its way to every node.
    start_unlock(state_, [](Result<detail::Released>) {});
    return {};
  }
  auto released = detail::call_sync<detail::Released>(
      *state_->engine, "unlock",
      [state = state_](auto deliver) { start_unlock(state, std::move(deliver)); });
  if (!released) return std::move(released).error();
  return {};
}

}  // namespace redlock

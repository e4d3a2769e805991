#include <utility>

#include <redlock/lock.hpp>

#include "client/calls/async_call.hpp"
#include "client/calls/sync_call.hpp"
#include "client/engine/engine.hpp"
#include "client/kinds/kind.hpp"
#include "client/kinds/lock_state.hpp"
#include "client/loop/fork_guard.hpp"
#include "client/loop/user_callback.hpp"
#include "client/operations/lock_extension.hpp"
#include "client/operations/operations.hpp"
#include "client/operations/watchdog.hpp"
#include "core/validation.hpp"

namespace redlock {

using detail::LockState;
using std::chrono::milliseconds;

namespace {

const std::string empty_string;
const std::vector<NodeOutcome> no_outcomes;

std::optional<Error> invalid_ttl(std::string_view what, std::optional<std::string> problem) {
  if (!problem) return std::nullopt;
  return Error(make_error_code(errc::invalid_argument), std::string(what) + ": " + *problem);
}

Error moved_from_error(std::string_view action) {
  return Error(make_error_code(errc::not_held), std::string(action) + ": this Lock was moved from");
}

/// A release nobody waits for (the destructor's, a last retry). One named type: a lambda
/// written inside start_unlock would be a new type in each of its instantiations.
struct NobodyWaits {
  void operator()(Result<detail::Released>) const noexcept {}
};

/// The release of unlock(), unlock_async() and the destructor: stops the watchdog and
/// deletes our value everywhere. Owner-checked and idempotent, so a release that was not
/// confirmed may be sent again. The caller counted it in releases_in_flight (before any
/// hop to the loop thread); its answer uncounts it. `done` (void(Result<Released>)) is
/// taken as it is, not as a ReleaseDone: wrapped in another one with the state, it would
/// no longer fit one in place.
template <typename Done>
void start_unlock(const std::shared_ptr<LockState>& state, Done done) {
  detail::stop_watchdog(*state);
  detail::start_release(
      state, state->engine->node_timeout(state->ttl()),
      [state, done = std::move(done)](Result<detail::Released> released) mutable {
        if (released) state->release = detail::ReleaseState::confirmed;
        const bool last = state->releases_in_flight.fetch_sub(1) == 1;
        if (!released && last && std::exchange(state->release_again_if_unconfirmed, false)) {
          // The handle is gone and left the last chance to this release: one more try.
          state->releases_in_flight.fetch_add(1);
          start_unlock(state, NobodyWaits{});
        }
        done(std::move(released));
      });
}

/// On the loop thread, for a handle being destroyed: an unlock_async() still on its way
/// finishes the release (and tries once more if it fails); otherwise the release starts
/// here, answered to no one.
void release_for_destroyed_handle(const std::shared_ptr<LockState>& state) {
  if (state->release.load() == detail::ReleaseState::confirmed) return;
  if (state->releases_in_flight.load() > 0) {
    state->release_again_if_unconfirmed = true;
    return;
  }
  state->releases_in_flight.fetch_add(1);
  start_unlock(state, NobodyWaits{});
}

bool release_confirmed(const std::shared_ptr<LockState>& state) {
  return !state || state->release.load() == detail::ReleaseState::confirmed;
}

}  // namespace

Lock::Lock(std::shared_ptr<detail::LockState> state) noexcept : state_(std::move(state)) {}
Lock::Lock() noexcept = default;

Lock::Lock(Lock&& other) noexcept = default;

Lock& Lock::operator=(Lock&& other) noexcept {
  if (this != &other) {
    Lock released(std::move(*this));  // our current lock, if any, is unlocked here
    state_ = std::move(other.state_);
  }
  return *this;
}

Lock::~Lock() {
  if (!state_) return;
  // In a forked child nothing is sent (the connections are the parent's) and the state is
  // left behind: its watchdog's timer is a handle of the parent's loop.
  if (state_->engine->forked()) {
    detail::ForkGuard::leak(std::move(state_));
    return;
  }
  // Read before `release`: a release that succeeds is marked confirmed before it is
  // uncounted, so seeing none in flight means seeing its confirmation too.
  const bool in_flight = state_->releases_in_flight.load() > 0;
  // A release that was requested but not confirmed is sent once more: it is idempotent,
  // and the last chance to free the nodes before the TTL does.
  if (!state_->request_release()) return;
  auto& engine = *state_->engine;
  if (engine.on_loop_thread()) {
    // Destroyed inside a callback: cannot wait here, the release proceeds on its own.
    release_for_destroyed_handle(state_);
    return;
  }
  if (in_flight) {
    // After unlock_async(): that release is on its way and its caller gets the answer;
    // a second one would double the nodes' work, and waiting for it would block a caller
    // who chose not to wait.
    (void)engine.post([state = state_] { release_for_destroyed_handle(state); });
    return;
  }
  // Bounded: every node answers or times out within node_timeout; the margin covers
  // the hop to the loop thread. Whatever happens, the destructor does not throw.
  const auto limit = engine.node_timeout(state_->ttl()) * 2 + milliseconds(100);
  (void)detail::call_sync_for<detail::Released>(
      engine, "unlock",
      [state = state_](auto deliver) {
        state->releases_in_flight.fetch_add(1);
        start_unlock(state, std::move(deliver));
      },
      limit);
}

const std::string& Lock::resource() const noexcept {
  return state_ ? state_->resource() : empty_string;
}
const std::string& Lock::value() const noexcept {
  return state_ ? state_->value : empty_string;
}

std::chrono::steady_clock::time_point Lock::valid_until() const noexcept {
  return state_ ? state_->valid_until() : std::chrono::steady_clock::time_point{};
}

milliseconds Lock::validity() const noexcept {
  if (!state_ || state_->released() || state_->lost) return milliseconds(0);
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
  return state_ && !state_->released();
}

Result<void> Lock::extend(milliseconds ttl) {
  if (!state_) return moved_from_error("extend");
  auto& engine = *state_->engine;
  if (engine.forked()) return engine.fork_error("extend " + detail::quote_key(state_->resource()));
  if (auto problem = invalid_ttl("extend", engine.check_extend_ttl(ttl))) {
    return *problem;
  }
  auto extended = detail::call_sync<core::Clock::time_point>(
      engine, "extend",
      [state = state_, ttl](auto deliver) { detail::extend_lock(state, ttl, std::move(deliver)); });
  if (!extended) return std::move(extended).error();
  return {};
}

void Lock::unlock_async(std::function<void(Result<void>)> done) {
  auto deliver = [done = std::move(done)](Result<detail::Released> released) mutable {
    if (!done) return;
    if (!released) return detail::call_user("unlock_async", done, std::move(released).error());
    detail::call_user("unlock_async", done, Result<void>());
  };
  if (state_ && state_->engine->forked()) {
    return deliver(state_->engine->fork_error("unlock " + detail::quote_key(state_->resource())));
  }
  if (!state_ || !state_->request_release()) return deliver(detail::Released{});
  // Counted here, before the hop: the handle may be destroyed before the loop runs it.
  state_->releases_in_flight.fetch_add(1);
  auto& engine = *state_->engine;
  if (engine.on_loop_thread()) return start_unlock(state_, std::move(deliver));
  auto shared_deliver = std::make_shared<decltype(deliver)>(std::move(deliver));
  const bool posted = engine.post(
      [state = state_, shared_deliver] { start_unlock(state, std::move(*shared_deliver)); });
  if (!posted) {
    state_->releases_in_flight.fetch_sub(1);
    (*shared_deliver)(detail::cancelled_error("unlock " + detail::quote_key(state_->resource())));
  }
}

Result<void> Lock::unlock() {
  if (release_confirmed(state_)) return {};
  if (state_->engine->forked()) {
    return state_->engine->fork_error("unlock " + detail::quote_key(state_->resource()));
  }
  // Like extend(): on the loop thread nothing may wait, so the call is refused and changes
  // nothing (unlock_async() or the destructor release from there).
  if (state_->engine->on_loop_thread()) return detail::loop_thread_error("unlock");
  if (!state_->request_release()) return {};
  auto released = detail::call_sync<detail::Released>(*state_->engine, "unlock",
                                                      [state = state_](auto deliver) {
                                                        state->releases_in_flight.fetch_add(1);
                                                        start_unlock(state, std::move(deliver));
                                                      });
  if (!released) return std::move(released).error();
  return {};
}

void Lock::extend_async(milliseconds ttl, std::function<void(Result<void>)> done) {
  if (!state_) {
    return done(Error(make_error_code(errc::not_held), "extend: this Lock was moved from"));
  }
  detail::call_async<void>(
      *state_->engine, "extend_async", "extend " + detail::quote_key(state_->resource()),
      invalid_ttl("extend", state_->engine->check_extend_ttl(ttl)),
      [state = state_, ttl](auto deliver) {
        detail::extend_lock(state, ttl, [deliver](Result<core::Clock::time_point> extended) {
          if (!extended) return deliver(std::move(extended).error());
          deliver({});
        });
      },
      std::move(done));
}

std::vector<std::string> Lock::resources() const {
  if (!state_) return {};
  const auto keys = state_->kind.keys();
  return {keys.begin(), keys.end()};
}

std::optional<std::uint64_t> Lock::fencing_token(std::string_view key) const {
  if (!state_) return std::nullopt;
  return state_->kind.token_of(key, state_->token, state_->tokens);
}

}  // namespace redlock

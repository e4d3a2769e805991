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
    // Destroyed inside a callback: cannot wait here, the release proceeds on its own (also
    // after close(), while the nodes are still open: the last chance to free them).
    release_for_destroyed_handle(state_);
    return;
  }
  const detail::CallName name{"unlock", state_->resource()};
  if (in_flight) {
    // After unlock_async(): that release is on its way and its caller gets the answer;
    // a second one would double the nodes' work, and waiting for it would block a caller
    // who chose not to wait. Nobody is told.
    detail::call_async<void>(engine, {"unlock", name}, std::nullopt,
                             [state = state_](auto answer) {
                               release_for_destroyed_handle(state);
                               answer(Result<void>());
                             },
                             {});
    return;
  }
  // Bounded: every node answers or times out within node_timeout; the margin covers
  // the hop to the loop thread. Whatever happens, the destructor does not throw.
  const auto limit = engine.node_timeout(state_->ttl()) * 2 + milliseconds(100);
  (void)detail::call_sync_for<detail::Released>(
      engine, name,
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
  auto extended = detail::call_sync<core::Clock::time_point>(
      engine, {"extend", state_->resource()}, invalid_ttl("extend", engine.check_extend_ttl(ttl)),
      [state = state_, ttl](auto deliver) { detail::extend_lock(state, ttl, std::move(deliver)); });
  if (!extended) return std::move(extended).error();
  return {};
}

void Lock::unlock_async(std::function<void(Result<void>)> done) {
  constexpr const char* callback = "unlock_async";
  // Moved from: nothing to release, and no client to reach.
  if (!state_) return detail::answer_at_once<void>(callback, done, Result<void>());
  auto& engine = *state_->engine;
  const detail::CallName name{"unlock", state_->resource()};
  if (engine.forked())
    return detail::answer_at_once<void>(callback, done, engine.fork_error(name.text()));
  // Given up from the first call on, whatever comes of it.
  const bool release_due = state_->request_release();
  if (!release_due) {
    // Nothing to release (already confirmed): success, on the loop as every answer, or at
    // once when there is no loop to answer on (after close()).
    if (engine.closed()) return detail::answer_at_once<void>(callback, done, Result<void>());
    return detail::call_async<void>(
        engine, {callback, name}, std::nullopt, [](auto answer) { answer(Result<void>()); },
        std::move(done));
  }
  if (engine.closed()) {
    return detail::answer_at_once<void>(callback, done, detail::cancelled_error(name.text()));
  }
  // Counted here, before the hop: the handle may be destroyed before the loop runs it.
  // (A close() from another thread between here and the hop leaves it counted: the
  // destructor then sends nothing, as it would not after close() anyway.)
  state_->releases_in_flight.fetch_add(1);
  detail::call_async<void>(
      engine, {callback, name}, std::nullopt,
      [state = state_](auto answer) {
        start_unlock(state, [answer](Result<detail::Released> released) {
          if (!released) return answer(std::move(released).error());
          answer(Result<void>());
        });
      },
      std::move(done));
}

Result<void> Lock::unlock() {
  // Moved from, or a release already confirmed: nothing to release, nothing sent.
  if (release_confirmed(state_)) return {};
  auto& engine = *state_->engine;
  const detail::CallName name{"unlock", state_->resource()};
  // In a forked child, and on the loop thread (where nothing may wait), the call is
  // refused and changes nothing (unlock_async() or the destructor release from there).
  // After close() the lock is given up all the same, and the call cancelled.
  if (auto refused = detail::sync_refusal(engine, name);
      refused && !(*refused == errc::cancelled)) {
    return *std::move(refused);
  }
  if (!state_->request_release()) return {};
  auto released = detail::call_sync<detail::Released>(engine, name, [state = state_](auto deliver) {
    state->releases_in_flight.fetch_add(1);
    start_unlock(state, std::move(deliver));
  });
  if (!released) return std::move(released).error();
  return {};
}

void Lock::extend_async(milliseconds ttl, std::function<void(Result<void>)> done) {
  if (!state_)
    return detail::answer_at_once<void>("extend_async", done, moved_from_error("extend"));
  auto& engine = *state_->engine;
  detail::call_async<void>(
      engine, {"extend_async", {"extend", state_->resource()}},
      invalid_ttl("extend", engine.check_extend_ttl(ttl)),
      [state = state_, ttl](auto answer) {
        detail::extend_lock(state, ttl, [answer](Result<core::Clock::time_point> extended) {
          if (!extended) return answer(std::move(extended).error());
          answer(Result<void>());
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

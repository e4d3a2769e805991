#pragma once
// The shared state behind a redlock::Lock. The owner's thread reads the validity and the
// flags while the loop thread moves them, so those are atomics; the rest is either fixed
// at acquisition or touched only on the loop thread.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <redlock/error.hpp>

#include "client/kinds/hold_limit.hpp"
#include "client/kinds/kind.hpp"
#include "client/rounds/outcome_pool.hpp"
#include "client/util/spare_texts.hpp"
#include "core/validity.hpp"

namespace redlock::detail {

class Engine;
class Watchdog;

/// How far a release of the lock got.
enum class ReleaseState : int {
  held = 0,       ///< unlock() was never called
  requested = 1,  ///< unlock() was called; no quorum confirmed the release (yet)
  confirmed = 2,  ///< a quorum no longer holds our value
};

struct LockState {
  ~LockState() {
    give_back_outcomes(std::move(nodes));
    give_back_text(std::move(value));
    give_back_text(kind.release_key());
  }

  std::shared_ptr<Engine> engine;
  /// What it holds: its kind of lock, with its key or keys (client/kinds/kind.hpp).
  Kind kind;
  std::string value;
  std::optional<std::uint64_t> token;
  /// A key set taken with fencing: one token per key, in the order of kind.keys().
  std::vector<std::uint64_t> tokens;
  std::vector<NodeOutcome> nodes;

  /// The TTL every extension uses, manual or the watchdog's: the last one a quorum
  /// confirmed. One TTL for both, or the watchdog would shrink what a manual extend set
  /// while validity() still promised the longer one.
  std::atomic<std::chrono::milliseconds::rep> ttl_ms{0};
  /// The watchdog's interval as the caller set it; 0 = a third of the current TTL.
  std::chrono::milliseconds extend_every{0};
  std::atomic<core::Clock::rep> valid_until_ticks{0};
  std::atomic<ReleaseState> release{ReleaseState::held};
  /// Releases handed to the loop thread and not yet answered (counted by the thread that
  /// asks, before the hop), so the destructor knows one is already on its way.
  std::atomic<int> releases_in_flight{0};
  /// The watchdog could not keep a quorum.
  std::atomic<bool> lost{false};

  // --- loop thread only -----------------------------------------------------------------
  /// The auto-extension, if any.
  std::shared_ptr<Watchdog> watchdog;
  /// Extension rounds of one lock run one at a time (lock_extension.hpp); these wait.
  /// A list, not a deque: a deque allocates on construction, and most locks never queue.
  bool extending = false;
  std::list<std::function<void()>> queued_extensions;
  /// The cap on auto-extension (LockOptions::max_hold, max_extensions).
  HoldLimit hold;
  /// The handle was destroyed while a release was out: if that release fails, it is
  /// sent once more, as the destructor would have done.
  bool release_again_if_unconfirmed = false;

  /// The key it holds (a key set's first).
  const std::string& resource() const noexcept { return kind.key(); }
  std::chrono::milliseconds ttl() const noexcept {
    return std::chrono::milliseconds(ttl_ms.load());
  }
  void set_ttl(std::chrono::milliseconds ttl) noexcept { ttl_ms.store(ttl.count()); }
  /// unlock() was called (or the Lock destroyed): never extend again.
  bool released() const noexcept { return release.load() != ReleaseState::held; }
  /// held -> requested, in one step: a release confirmed on the loop thread meanwhile
  /// stays confirmed (a plain store could turn it back into requested and send a release
  /// nobody needs). False when the release was already confirmed.
  bool request_release() noexcept {
    auto seen = ReleaseState::held;
    release.compare_exchange_strong(seen, ReleaseState::requested);
    return seen != ReleaseState::confirmed;
  }
  core::Clock::time_point valid_until() const noexcept {
    return core::Clock::time_point(core::Clock::duration(valid_until_ticks.load()));
  }
  void set_valid_until(core::Clock::time_point when) noexcept {
    valid_until_ticks.store(when.time_since_epoch().count());
  }
  /// Only ever lowers the validity: what a round that may have shortened the key's TTL on
  /// some nodes leaves of it.
  void cap_valid_until(core::Clock::time_point when) noexcept {
    auto current = valid_until_ticks.load();
    const auto capped = when.time_since_epoch().count();
    while (capped < current && !valid_until_ticks.compare_exchange_weak(current, capped)) {
    }
  }
};

}  // namespace redlock::detail

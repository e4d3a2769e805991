#pragma once
// The shared state behind a redlock::Lock. The watchdog (on the loop thread) and the
// owner's thread both read and move the validity, so it and the flags are atomics;
// everything else is fixed at acquisition.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <redlock/error.hpp>

#include "core/validity.hpp"

namespace redlock::detail {

class Engine;
class Watchdog;

struct LockState {
  std::shared_ptr<Engine> engine;
  std::string resource;
  std::string value;
  std::optional<std::uint64_t> token;
  std::vector<NodeOutcome> nodes;
  std::chrono::milliseconds ttl{0};

  std::atomic<core::Clock::rep> valid_until_ticks{0};
  /// unlock() was called (or the Lock was destroyed): never extend again.
  std::atomic<bool> released{false};
  /// The watchdog could not keep a quorum.
  std::atomic<bool> lost{false};

  /// Loop thread only: the auto-extension, if any.
  std::shared_ptr<Watchdog> watchdog;

  core::Clock::time_point valid_until() const noexcept {
    return core::Clock::time_point(core::Clock::duration(valid_until_ticks.load()));
  }
  void set_valid_until(core::Clock::time_point when) noexcept {
    valid_until_ticks.store(when.time_since_epoch().count());
  }
};

}  // namespace redlock::detail

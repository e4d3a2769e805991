#pragma once
/// @file
/// Polling for a condition that a fault makes true a little later.

#include <chrono>
#include <functional>
#include <thread>

namespace redlock::testing {

/// Whether `predicate` returns true within `timeout`, calling it every `interval` (and once
/// at the end). For what settles after a fault verb returned: a client notices a dead or
/// healed member only on its next request or reconnect.
inline bool eventually(const std::function<bool()>& predicate,
                       std::chrono::milliseconds timeout = std::chrono::seconds(5),
                       std::chrono::milliseconds interval = std::chrono::milliseconds(10)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    if (predicate()) return true;
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(interval);
  }
}

}  // namespace redlock::testing

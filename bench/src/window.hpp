#pragma once
// The measurement window shared by the main thread and the workers. An operation counts
// if it *completes* inside the window, so operations straddling either edge are
// symmetric (the accounting of the redlock-bench/v1 contract).

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>

namespace redlock_bench {

using Clock = std::chrono::steady_clock;

inline double ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

class Window {
 public:
  explicit Window(std::optional<std::uint64_t> ops) : ops_(ops) {}

  void open() { phase_.store(Phase::measuring, std::memory_order_release); }
  void close() { phase_.store(Phase::over, std::memory_order_release); }
  bool measuring() const { return phase_.load(std::memory_order_acquire) == Phase::measuring; }
  bool over() const { return phase_.load(std::memory_order_acquire) == Phase::over; }

  /// Called by a worker before each attempt: false when it should stop (the window is
  /// over, or --ops attempts were already started in it).
  bool may_start() {
    const Phase phase = phase_.load(std::memory_order_acquire);
    if (phase == Phase::over) return false;
    if (phase == Phase::measuring && ops_) return started_.fetch_add(1) < *ops_;
    return true;
  }

  /// Called with every attempt completed inside the window (success or failure).
  void completed() {
    if (completed_.fetch_add(1, std::memory_order_relaxed) + 1 == ops_.value_or(0)) {
      std::lock_guard lock(done_mutex_);
      done_.notify_all();
    }
  }
  /// With --ops: waits until that many attempts completed inside the window, or `limit`
  /// passed. Blocking rather than polling keeps the bench's own wakeups out of the
  /// per-cycle counts.
  void wait_for_ops(Clock::duration limit) {
    std::unique_lock lock(done_mutex_);
    done_.wait_for(lock, limit,
                   [&] { return completed_.load(std::memory_order_relaxed) >= *ops_; });
  }
  bool fixed_ops() const { return ops_.has_value(); }

 private:
  enum class Phase { warmup, measuring, over };
  std::atomic<Phase> phase_{Phase::warmup};
  std::optional<std::uint64_t> ops_;
  std::atomic<std::uint64_t> started_{0};
  std::atomic<std::uint64_t> completed_{0};
  std::mutex done_mutex_;
  std::condition_variable done_;
};

}  // namespace redlock_bench

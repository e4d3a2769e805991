// W chains of asynchronous acquisitions (lock_async() or another kind's) on the client's
// loop thread.

#include <condition_variable>
#include <mutex>

#include "driver.hpp"

namespace redlock_bench {

namespace {

class AsyncDriver final : public Driver {
 public:
  explicit AsyncDriver(Workload workload)
      : workload_(std::move(workload)),
        started_at_(workload_.keys.size()),
        timing_(workload_.keys.size()) {
    tally_.cycles_by_worker.resize(workload_.keys.size());
  }

  void start() override {
    for (std::size_t i = 0; i < workload_.keys.size(); ++i) launch(i);
  }

  int busy_since_before(Clock::time_point before) const override {
    std::lock_guard lock(mutex_);
    int count = 0;
    for (const auto& since : started_at_) {
      if (since && *since < before) ++count;
    }
    return count;
  }

  bool stop(Clock::duration limit) override {
    std::unique_lock lock(mutex_);
    return stopped_cv_.wait_for(lock, limit, [&] { return stopped_ == workload_.keys.size(); });
  }

  Tally collect() override {
    std::lock_guard lock(mutex_);
    return tally_;
  }

 private:
  // Runs on the caller's thread for the first attempt, on the loop thread afterwards.
  void launch(std::size_t index) {
    if (!workload_.window->may_start()) {
      std::lock_guard lock(mutex_);
      started_at_[index].reset();
      ++stopped_;
      stopped_cv_.notify_all();
      return;
    }
    const auto t0 = Clock::now();
    {
      std::lock_guard lock(mutex_);
      started_at_[index] = t0;
    }
    timing_[index].started = t0;
    workload_.acquire_async(index, [this, index](redlock::Result<redlock::Lock> lock) {
      on_acquired(index, std::move(lock));
    });
  }

  void on_acquired(std::size_t index, redlock::Result<redlock::Lock> lock) {
    const auto t0 = timing_[index].started;
    const auto t1 = Clock::now();
    if (!lock) {
      {
        std::lock_guard guard(mutex_);
        started_at_[index].reset();
        if (workload_.window->measuring()) {
          ++tally_.attempts;
          ++tally_.failures;
          tally_.acquire_fail.add(ms_between(t0, t1));
          ++tally_.error_kinds[error_kind(lock.error().code())];
          workload_.window->completed();
        }
      }
      return launch(index);
    }
    // The next attempt starts once the release is confirmed, as a caller that awaits its
    // unlock would do: a cycle is acquire plus release, timed like the threads driver's.
    timing_[index].acquired = t1;
    lock->unlock_async([this, index](redlock::Result<void> released) {
      const auto t0 = timing_[index].started;
      const auto t1 = timing_[index].acquired;
      const auto t2 = Clock::now();
      {
        std::lock_guard guard(mutex_);
        started_at_[index].reset();
        if (workload_.window->measuring()) {
          ++tally_.attempts;
          ++tally_.cycles;
          ++tally_.cycles_by_worker[index];
          tally_.acquire_ok.add(ms_between(t0, t1));
          tally_.release.add(ms_between(t1, t2));
          tally_.cycle.add(ms_between(t0, t2));
          if (!released) {
            ++tally_.release_failures;
            ++tally_.error_kinds["release:" + error_kind(released.error().code())];
          }
          workload_.window->completed();
        }
      }
      launch(index);
    });
  }

  Workload workload_;
  mutable std::mutex mutex_;  // the loop thread records; the main thread reads at the end
  std::condition_variable stopped_cv_;
  std::vector<std::optional<Clock::time_point>> started_at_;
  // A chain's own times, touched by that chain alone (one call at a time), so that its
  // callbacks capture two words and fit std::function's inline storage: the benchmark
  // allocates nothing per cycle of its own.
  struct ChainTiming {
    Clock::time_point started;
    Clock::time_point acquired;
  };
  std::vector<ChainTiming> timing_;
  std::size_t stopped_ = 0;
  Tally tally_;
};

}  // namespace

std::unique_ptr<Driver> make_async_driver(Workload workload) {
  return std::make_unique<AsyncDriver>(std::move(workload));
}

}  // namespace redlock_bench

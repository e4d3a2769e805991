// W threads, each doing synchronous lock() + unlock() cycles.

#include <condition_variable>
#include <mutex>
#include <thread>

#include "driver.hpp"

namespace redlock_bench {

namespace {

std::int64_t to_ns(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

class ThreadsDriver final : public Driver {
 public:
  explicit ThreadsDriver(Workload workload) : workload_(std::move(workload)) {
    for (std::size_t i = 0; i < workload_.keys.size(); ++i)
      workers_.push_back(std::make_unique<Worker>());
  }

  ~ThreadsDriver() override {
    for (auto& worker : workers_) {
      if (worker->thread.joinable()) worker->thread.detach();
    }
  }

  void start() override {
    for (std::size_t i = 0; i < workers_.size(); ++i) {
      workers_[i]->thread = std::thread([this, i] { run(i); });
    }
  }

  int busy_since_before(Clock::time_point before) const override {
    int count = 0;
    for (const auto& worker : workers_) {
      const auto since = worker->busy_since_ns.load();
      if (since != 0 && since < to_ns(before)) ++count;
    }
    return count;
  }

  bool stop(Clock::duration limit) override {
    std::unique_lock lock(stopped_mutex_);
    const bool all = stopped_cv_.wait_for(lock, limit, [&] { return stopped_ == workers_.size(); });
    lock.unlock();
    if (all) {
      for (auto& worker : workers_) worker->thread.join();
    }
    return all;
  }

  Tally collect() override {
    Tally total;
    for (auto& worker : workers_) {
      std::lock_guard lock(worker->mutex);
      total.merge(worker->tally);
      total.cycles_by_worker.push_back(worker->tally.cycles);
    }
    return total;
  }

 private:
  struct Worker {
    std::thread thread;
    std::mutex mutex;  // uncontended except when collect() races a worker that hangs
    Tally tally;
    std::atomic<std::int64_t> busy_since_ns{0};  // 0 = between operations
  };

  void run(std::size_t index) {
    Worker& worker = *workers_[index];
    Window& window = *workload_.window;
    while (window.may_start()) {
      const auto t0 = Clock::now();
      worker.busy_since_ns = to_ns(t0);
      auto lock = workload_.acquire(index);
      const auto t1 = Clock::now();
      if (!lock) {
        worker.busy_since_ns = 0;
        if (window.measuring()) {
          std::lock_guard guard(worker.mutex);
          ++worker.tally.attempts;
          ++worker.tally.failures;
          worker.tally.acquire_fail.add(ms_between(t0, t1));
          ++worker.tally.error_kinds[error_kind(lock.error().code())];
          window.completed();
        }
        continue;
      }
      auto released = lock->unlock();
      const auto t2 = Clock::now();
      worker.busy_since_ns = 0;
      if (window.measuring()) {
        std::lock_guard guard(worker.mutex);
        ++worker.tally.attempts;
        ++worker.tally.cycles;
        worker.tally.acquire_ok.add(ms_between(t0, t1));
        worker.tally.release.add(ms_between(t1, t2));
        worker.tally.cycle.add(ms_between(t0, t2));
        if (!released) {
          ++worker.tally.release_failures;
          ++worker.tally.error_kinds["release:" + error_kind(released.error().code())];
        }
        window.completed();
      }
    }
    std::lock_guard lock(stopped_mutex_);
    ++stopped_;
    stopped_cv_.notify_all();
  }

  Workload workload_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::mutex stopped_mutex_;
  std::condition_variable stopped_cv_;
  std::size_t stopped_ = 0;
};

}  // namespace

std::unique_ptr<Driver> make_threads_driver(Workload workload) {
  return std::make_unique<ThreadsDriver>(std::move(workload));
}

}  // namespace redlock_bench

#pragma once
// How the workers are run. Both drivers do the same workload (acquire, release, repeat,
// each worker on its key or keys) through the library's public API, the way an
// application would write it:
//   threads — W threads, each acquiring (lock(), read_lock(), acquire_permit() or
//             lock_all(), by mode) then calling unlock() (synchronous; each call is
//             posted to the client's loop thread and waited for);
//   async   — W chains of the same acquisitions' *_async forms on the client's loop
//             thread; the callback calls unlock_async() and starts the next attempt
//             once the release is confirmed.

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <redlock/client.hpp>
#include <redlock/options.hpp>

#include "config.hpp"
#include "tally.hpp"
#include "window.hpp"

namespace redlock_bench {

struct Workload {
  redlock::Client* client = nullptr;
  Window* window = nullptr;
  Mode mode = Mode::distinct;
  int permits = 0;  ///< Mode::permits: K
  redlock::LockOptions lock_options;
  /// Per worker, what it locks: one key (the same one for all in the hot, shared and
  /// permits modes), or M keys in the keys mode.
  std::vector<std::vector<std::string>> keys;

  /// One acquisition by `worker`, the way its mode takes the lock.
  redlock::Result<redlock::Lock> acquire(std::size_t worker) const;
  void acquire_async(std::size_t worker, redlock::Client::LockCallback done) const;
};

class Driver {
 public:
  virtual ~Driver() = default;
  /// Starts every worker; returns at once.
  virtual void start() = 0;
  /// Workers whose current operation began before `before` and has not completed.
  virtual int busy_since_before(Clock::time_point before) const = 0;
  /// After Window::close(): waits up to `limit` for every worker to finish its current
  /// operation and stop. False when some did not (their samples may be missing).
  virtual bool stop(Clock::duration limit) = 0;
  /// Everything recorded inside the window; call after stop().
  virtual Tally collect() = 0;
};

std::unique_ptr<Driver> make_threads_driver(Workload workload);
std::unique_ptr<Driver> make_async_driver(Workload workload);

}  // namespace redlock_bench

#pragma once
// How the workers are run. Both drivers do the same workload (acquire, release, repeat,
// each worker on its key) through the library's public API, the way an application
// would write it:
//   threads — W threads, each calling lock() then unlock() (synchronous; each call is
//             posted to the client's loop thread and waited for);
//   async   — W chains of lock_async() on the client's loop thread; the callback calls
//             unlock(), which on the loop thread sends the release without waiting for
//             it, and starts the next attempt. The release is therefore not timed
//             (release_ms is empty), but it is on the wire before the next acquire of
//             the same key on every node's connection, so each node still sees
//             acquire, release, acquire, ...

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <redlock/client.hpp>
#include <redlock/options.hpp>

#include "tally.hpp"
#include "window.hpp"

namespace redlock_bench {

struct Workload {
  redlock::Client* client = nullptr;
  Window* window = nullptr;
  redlock::LockOptions lock_options;
  std::vector<std::string> keys;  ///< one per worker (the same one in hot mode)
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

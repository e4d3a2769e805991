// How a worker acquires in each mode: the exclusive lock, a reader of a read-write lock,
// a permit of a semaphore or a key set, each through its public call.

#include <redlock/semaphore.hpp>

#include "driver.hpp"

namespace redlock_bench {

namespace {

redlock::SemaphoreOptions permit_options(const Workload& workload) {
  return {.permits = workload.permits, .lock = workload.lock_options};
}

}  // namespace

redlock::Result<redlock::Lock> Workload::acquire(std::size_t worker) const {
  const auto& mine = keys[worker];
  switch (mode) {
    case Mode::shared:
      return client->read_lock(mine.front(), lock_options);
    case Mode::permits:
      return client->acquire_permit(mine.front(), permit_options(*this));
    case Mode::keys:
      return client->lock_all(mine, lock_options);
    case Mode::distinct:
    case Mode::hot:
      break;
  }
  return client->lock(mine.front(), lock_options);
}

void Workload::acquire_async(std::size_t worker, redlock::Client::LockCallback done) const {
  const auto& mine = keys[worker];
  switch (mode) {
    case Mode::shared:
      return client->read_lock_async(mine.front(), lock_options, std::move(done));
    case Mode::permits:
      return client->acquire_permit_async(mine.front(), permit_options(*this), std::move(done));
    case Mode::keys:
      return client->lock_all_async(mine, lock_options, std::move(done));
    case Mode::distinct:
    case Mode::hot:
      break;
  }
  client->lock_async(mine.front(), lock_options, std::move(done));
}

}  // namespace redlock_bench

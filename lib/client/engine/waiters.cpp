#include "client/engine/waiters.hpp"

#include <algorithm>
#include <utility>

namespace redlock::detail {

std::vector<WaiterQueue::Waiter>::iterator WaiterQueue::find(Id id) {
  return std::find_if(waiters_.begin(), waiters_.end(),
                      [id](const Waiter& waiter) { return waiter.id == id; });
}

void WaiterQueue::join(Id id) {
  waiters_.push_back(Waiter{id});
}

void WaiterQueue::wait_for_turn(Id id) {
  auto it = find(id);
  if (it != waiters_.end()) it->attempting = false;
}

bool WaiterQueue::has_waiters_before(Id id) const {
  return !waiters_.empty() && waiters_.front().id != id &&
         std::any_of(waiters_.begin(), waiters_.end(),
                     [id](const Waiter& waiter) { return waiter.id == id; });
}

std::optional<WaiterQueue::Id> WaiterQueue::announce() {
  return wake_from(waiters_.begin());
}

std::optional<WaiterQueue::Id> WaiterQueue::wake_from(std::vector<Waiter>::iterator from) {
  auto idle = std::find_if(from, waiters_.end(), [](const Waiter& waiter) {
    return !waiter.attempting && !waiter.holds_wake;
  });
  if (idle != waiters_.end()) {
    idle->holds_wake = true;
    return idle->id;
  }
  // An attempt in flight may have reached the nodes before the release and fail because
  // of the old holder: it must not then sleep as if nothing had happened.
  if (std::any_of(waiters_.begin(), waiters_.end(),
                  [](const Waiter& waiter) { return waiter.attempting; })) {
    wake_kept_ = true;
  }
  return std::nullopt;
}

void WaiterQueue::attempt_started(Id id) {
  auto it = find(id);
  if (it == waiters_.end()) return;
  it->attempting = true;
  if (std::exchange(wake_kept_, false)) it->holds_wake = true;
}

WaiterQueue::AfterFailure WaiterQueue::attempt_failed(Id id, bool holder_seen) {
  AfterFailure after;
  auto it = find(id);
  if (it == waiters_.end()) return after;
  it->attempting = false;
  const bool held = std::exchange(it->holds_wake, false);
  after.retry_now = wake_kept_;
  if (held && !holder_seen) after.wake = wake_from(std::next(it));
  return after;
}

std::optional<WaiterQueue::Id> WaiterQueue::leave(Id id, bool acquired) {
  auto it = find(id);
  if (it == waiters_.end()) return std::nullopt;
  // Our own holder's release will announce; a release announced before it is stale.
  if (acquired) wake_kept_ = false;
  const bool pass = it->holds_wake && !acquired;
  it = waiters_.erase(it);
  if (waiters_.empty()) wake_kept_ = false;
  if (!pass) return std::nullopt;
  return wake_from(it);
}

}  // namespace redlock::detail

#include "net/timer.hpp"

#include <uv.h>

#include <utility>

#include "net/closing.hpp"

namespace redlock::net {

struct Timer::Impl : Timer {
  uv_timer_t handle{};
  std::function<void()> fire;

  static void on_timeout(uv_timer_t* handle) {
    auto* self = static_cast<Impl*>(handle->data);
    // Moved out first: the callback may re-arm or close this timer.
    auto fire = std::move(self->fire);
    self->fire = nullptr;
    if (fire) fire();
  }
};

TimerPtr Timer::create(uv_loop_s* loop) {
  auto* timer = new Impl();
  uv_timer_init(loop, &timer->handle);
  timer->handle.data = timer;
  return TimerPtr(timer);
}

void Timer::start(std::chrono::milliseconds delay, std::function<void()> fire) {
  auto* self = static_cast<Impl*>(this);
  self->fire = std::move(fire);
  const auto ms = delay.count() < 0 ? 0 : static_cast<std::uint64_t>(delay.count());
  uv_timer_start(&self->handle, &Impl::on_timeout, ms, 0);
}

void Timer::stop() {
  auto* self = static_cast<Impl*>(this);
  uv_timer_stop(&self->handle);
  self->fire = nullptr;
}

void Timer::close() {
  auto* self = static_cast<Impl*>(this);
  uv_timer_stop(&self->handle);
  self->fire = nullptr;
  net::close_and_free<Impl>(&self->handle);
}

}  // namespace redlock::net

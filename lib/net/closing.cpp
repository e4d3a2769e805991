#include "net/closing.hpp"

#include <uv.h>

#include <utility>

namespace redlock::net {
namespace {

struct NextTurn {
  uv_idle_t handle{};
  NextTurnTask task;

  static void on_idle(uv_idle_t* handle) {
    auto* self = static_cast<NextTurn*>(handle->data);
    uv_idle_stop(handle);
    // Taken out first: the task may post further tasks, and the handle closes now.
    NextTurnTask task = std::move(self->task);
    close_and_free<NextTurn>(handle);
    if (task) task();
  }
};

}  // namespace

void run_next_turn(uv_loop_s* loop, NextTurnTask task) {
  auto* next = new NextTurn;
  next->task = std::move(task);
  next->handle.data = next;
  uv_idle_init(loop, &next->handle);
  uv_idle_start(&next->handle, &NextTurn::on_idle);
}

}  // namespace redlock::net

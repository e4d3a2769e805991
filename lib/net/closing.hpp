#pragma once
// The one ownership rule for objects that own libuv handles or requests (a Connection, a
// Transport, a DNS lookup, a client Timer, a task for the next loop turn): libuv may
// still call into a handle after its owner is done with it, so memory is released only
// in libuv's close callback. The owner therefore never deletes such an object: it calls
// close() exactly once, and the object frees itself once libuv is done with it (the loop
// must keep running until then). ClosingPtr is that owner.

#include <uv.h>

#include <functional>
#include <memory>

#include "core/small_function.hpp"

namespace redlock::net {

struct CloseDeleter {
  template <typename T>
  void operator()(T* object) const noexcept {
    object->close();
  }
};

/// Owns a self-closing object: destroying or resetting it calls close(). Reset it on the
/// loop thread; an owner destroyed elsewhere must have reset it before.
template <typename T>
using ClosingPtr = std::unique_ptr<T, CloseDeleter>;

/// The one place where such an object's memory goes: closes `handle`, whose `data` is
/// the `Owner` that embeds it, and deletes that owner in libuv's close callback.
template <typename Owner, typename Handle>
void close_and_free(Handle* handle) {
  uv_close(reinterpret_cast<uv_handle_t*>(handle),
           [](uv_handle_t* closed) { delete static_cast<Owner*>(closed->data); });
}

/// Runs `task` once on a later turn of `loop` (never inside this call), then frees what
/// it used. Loop thread only. If the loop is closed before that turn, the task never runs;
/// callers that must answer a callback rely on the loop being run until it is empty.
/// A task may own what it captures (a command's callback is move-only).
using NextTurnTask = core::SmallFunction<void(), 64>;
void run_next_turn(uv_loop_s* loop, NextTurnTask task);

}  // namespace redlock::net

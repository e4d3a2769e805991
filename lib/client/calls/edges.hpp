#pragma once
// The edge rules every public call shares, sync and async (include/redlock/client.hpp,
// "Edge rules"), in the order they are checked:
//
//   1. in a child forked since the client was made: the fork error, at once, nothing
//      touched (fork_guard.hpp);
//   2. no client to reach (a moved-from Lock): answered at once (the call's own answer:
//      not_held, or success for a release), on the calling thread;
//   3. after close(): errc::cancelled, at once on the calling thread;
//   4. a synchronous call on the loop thread: errc::invalid_argument (it would wait for
//      itself), nothing sent;
//   5. bad arguments: their error, as the call's answer (an async one on the loop thread);
//   6. otherwise the operation runs, and answers exactly once: a synchronous call by
//      returning, an asynchronous one on the loop thread, never inside the call.
//
// An empty callback means nobody is told: an acquisition then does nothing (nobody would
// hold what it took), every other operation runs as it would with a callback.
// sync_call.hpp and async_call.hpp apply them; the callers in api/ only name the call.

#include <optional>
#include <string>
#include <string_view>

#include <redlock/error.hpp>

#include "client/engine/engine.hpp"
#include "client/util/messages.hpp"

namespace redlock::detail {

/// How a call is named in its errors: "lock \"orders:42\"", or "leader" without a key.
/// Two views, made into a string only when an error needs it.
struct CallName {
  std::string_view verb;
  std::optional<std::string_view> key{};

  std::string text() const {
    return key ? std::string(verb) + " " + quote_key(*key) : std::string(verb);
  }
};

inline Error loop_thread_error(std::string_view what) {
  return Error(make_error_code(errc::invalid_argument),
               std::string(what) +
                   ": a synchronous call on the client's loop thread (inside a callback) would "
                   "wait for itself; use the asynchronous form");
}

/// Rules 1, 3 and 4 for a synchronous call: why it must not reach the loop, if it must not.
inline std::optional<Error> sync_refusal(const Engine& engine, const CallName& name) {
  if (engine.forked()) return engine.fork_error(name.text());
  if (engine.closed()) return cancelled_error(name.text());
  if (engine.on_loop_thread()) return loop_thread_error(name.verb);
  return std::nullopt;
}

/// Rules 1 and 3 for an asynchronous call: the answer it gets at once, if any.
inline std::optional<Error> async_refusal(const Engine& engine, const CallName& name) {
  if (engine.forked()) return engine.fork_error(name.text());
  if (engine.closed()) return cancelled_error(name.text());
  return std::nullopt;
}

}  // namespace redlock::detail

#pragma once
// Calling the application's callbacks from the loop thread. An exception must not cross
// the loop (it would end the process from a thread the application does not own, with
// every other lock of the client): it is caught here and reported on stderr, once per
// callback, naming it. The operation itself has completed by then.

#include <cstdio>
#include <exception>
#include <utility>

#include "client/loop/leader_followers.hpp"

namespace redlock::detail {

template <typename Callback, typename... Args>
void call_user_here(const char* what, Callback& callback, Args&&... args) noexcept {
  try {
    callback(std::forward<Args>(args)...);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "redlock: the %s callback threw (%s); the exception was dropped\n", what,
                 e.what());
  } catch (...) {
    std::fprintf(stderr, "redlock: the %s callback threw; the exception was dropped\n", what);
  }
}

/// On the loop thread. A synchronous caller that runs the loop hands the call to the
/// background thread instead (LeaderFollowers::defer_to_background), with a copy of the
/// callback: the one given may not outlive this call.
template <typename Callback, typename... Args>
void call_user(const char* what, Callback& callback, Args&&... args) noexcept {
  if (LeaderFollowers::caller_leads()) {
    return LeaderFollowers::defer_to_background(
        [what, callback, ... args = std::forward<Args>(args)]() mutable {
          call_user_here(what, callback, std::move(args)...);
        });
  }
  call_user_here(what, callback, std::forward<Args>(args)...);
}

}  // namespace redlock::detail

#pragma once
// Calling the application's callbacks from the loop thread. An exception must not cross
// the loop (it would end the process from a thread the application does not own, with
// every other lock of the client): it is caught here and reported on stderr, once per
// callback, naming it. The operation itself has completed by then.

#include <cstdio>
#include <exception>
#include <utility>

namespace redlock::detail {

template <typename Callback, typename... Args>
void call_user(const char* what, Callback& callback, Args&&... args) noexcept {
  try {
    callback(std::forward<Args>(args)...);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "redlock: the %s callback threw (%s); the exception was dropped\n", what,
                 e.what());
  } catch (...) {
    std::fprintf(stderr, "redlock: the %s callback threw; the exception was dropped\n", what);
  }
}

}  // namespace redlock::detail

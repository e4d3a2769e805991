#pragma once
// A test whose call never returns ends the process with a message naming the call,
// instead of hanging the suite until ctest's timeout says nothing about it.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>

namespace redlock::test {

/// Returns once `future` is ready; ends the process if it is not within `limit`.
template <typename T>
void must_finish(std::future<T>& future, std::chrono::milliseconds limit, const char* what) {
  if (future.wait_for(limit) == std::future_status::ready) return;
  std::fprintf(stderr, "FATAL: %s did not finish within %lld ms (a hang)\n", what,
               static_cast<long long>(limit.count()));
  std::fflush(stderr);
  std::_Exit(1);
}

}  // namespace redlock::test

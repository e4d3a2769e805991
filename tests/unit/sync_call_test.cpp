// Synchronous calls over scripted nodes (tests/support/scripted_node.hpp), whose answers
// come from the loop's timers, never from a socket. A caller that runs the loop itself
// (leader/followers) must return as soon as its answer came, in whatever phase of the
// loop's turn that was: a loop turn that goes on to wait for I/O after a timer answered
// it would keep the caller there until some later event, here forever.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "client/api/client_access.hpp"
#include "client/engine/engine.hpp"
#include "scripted_node.hpp"

namespace redlock::detail {
namespace {

using namespace std::chrono_literals;

std::shared_ptr<Client> scripted_client(ScriptedObserved& observed) {
  Options options;
  // No server behind these: the release announcements' subscriber connections fail.
  for (int i = 1; i <= 5; ++i) {
    options.nodes.push_back("unix:///nonexistent/redlock-sync-call-" + std::to_string(i) + ".sock");
  }
  auto engine = Engine::create(options, [&](uv_loop_s* loop, net::ConnectionOptions connection) {
    return std::make_unique<ScriptedNode>(loop, connection.endpoint.display, observed);
  });
  return ClientAccess::make(engine);
}

// Ends the process instead of hanging the suite when `future` never completes.
void must_finish(std::future<void>& future, std::chrono::seconds limit, const char* what) {
  if (future.wait_for(limit) == std::future_status::ready) return;
  std::fprintf(stderr, "FATAL: %s did not return within %lld s (a hang)\n", what,
               static_cast<long long>(limit.count()));
  std::fflush(stderr);
  std::_Exit(1);
}

TEST(SyncCall, OneCallerAnsweredByTimersReturns) {
  ScriptedObserved observed;
  auto client = scripted_client(observed);
  std::atomic<int> cycles{0};
  auto done = std::async(std::launch::async, [&] {
    for (int i = 0; i < 200; ++i) {
      auto lock = client->try_lock("sync-call", 10s);
      if (!lock) return;
      if (lock->unlock()) ++cycles;
    }
  });
  must_finish(done, 10s, "200 lock/unlock cycles on one thread");
  EXPECT_EQ(cycles.load(), 200);
  client->close();
}

TEST(SyncCall, ManyCallersAnsweredByTimersReturn) {
  ScriptedObserved observed;
  auto client = scripted_client(observed);
  constexpr int threads = 4;
  constexpr int per_thread = 100;
  std::atomic<int> cycles{0};
  auto done = std::async(std::launch::async, [&] {
    std::vector<std::thread> callers;
    for (int t = 0; t < threads; ++t) {
      callers.emplace_back([&, key = "sync-call:" + std::to_string(t)] {
        for (int i = 0; i < per_thread; ++i) {
          auto lock = client->try_lock(key, 10s);
          if (lock && lock->unlock()) ++cycles;
        }
      });
    }
    for (auto& caller : callers) caller.join();
  });
  must_finish(done, 20s, "lock/unlock cycles on four threads");
  EXPECT_EQ(cycles.load(), threads * per_thread);
  client->close();
}

}  // namespace
}  // namespace redlock::detail

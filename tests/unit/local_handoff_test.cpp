// A handoff between two lock() calls of one client, through the node seam with scripted
// nodes (tests/support/scripted_node.hpp): the waiter's acquire must be sent right behind
// the holder's release on every node, while that release is still unanswered, so that
// each node runs the two back to back and the handoff costs one round trip.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <thread>

#include <redlock/redlock.hpp>
#include <redlock/testing/eventually.hpp>

#include "client/api/client_access.hpp"
#include "client/engine/engine.hpp"
#include "member/node.hpp"
#include "scripted_node.hpp"

namespace redlock::detail {
namespace {

using namespace std::chrono_literals;

// The kit's, polling every millisecond: the scripted nodes answer within microseconds.
bool eventually(const std::function<bool()>& predicate, std::chrono::milliseconds limit = 5s) {
  return redlock::testing::eventually(predicate, limit, 1ms);
}

TEST(LocalHandoff, WaiterOfTheReleasingClientIsSentItsAcquireBehindTheRelease) {
  ScriptedObserved observed;
  std::vector<ScriptedNode*> nodes;
  Options options;
  // No server behind these: the release announcements' subscriber connections fail.
  for (int i = 1; i <= 5; ++i) {
    options.nodes.push_back("unix:///nonexistent/redlock-scripted-" + std::to_string(i) + ".sock");
  }
  options.retry_delay = 10s;  // the retry timer alone could not hand the lock over in time
  auto engine = Engine::create(options, [&](uv_loop_s* loop, net::ConnectionOptions connection) {
    auto node = std::make_unique<ScriptedNode>(loop, connection.endpoint.display, observed);
    nodes.push_back(node.get());
    return node;
  });
  auto client = ClientAccess::make(engine);

  auto holder = client->try_lock("handoff", 10s);
  ASSERT_TRUE(holder) << holder.error().message();
  std::promise<Result<Lock>> waited;
  std::thread waiter([&] { waited.set_value(client->lock("handoff", {.ttl = 10s, .wait = 4s})); });
  // The waiter's first attempt found the holder on every node; it now sleeps.
  ASSERT_TRUE(eventually([&] { return observed.acquires_answered == 10; }));

  observed.hold_releases = true;
  std::promise<Result<void>> released;
  holder->unlock_async([&](Result<void> result) { released.set_value(std::move(result)); });
  const bool pipelined = eventually([&] { return observed.acquires_behind_release == 5; }, 2s);
  EXPECT_TRUE(pipelined) << "acquires sent behind an unanswered release: "
                         << observed.acquires_behind_release;
  observed.hold_releases = false;
  ASSERT_TRUE(engine->post([&] {
    for (auto* node : nodes) node->flush();
  }));

  EXPECT_TRUE(released.get_future().get());
  auto lock = waited.get_future().get();
  waiter.join();
  ASSERT_TRUE(lock) << lock.error().message();
  for (const auto& node : lock->nodes()) {
    EXPECT_TRUE(node.status == NodeStatus::granted || node.status == NodeStatus::pending)
        << describe(node);
  }
  client->close();
}

}  // namespace
}  // namespace redlock::detail

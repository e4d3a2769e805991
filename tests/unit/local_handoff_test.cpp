// A handoff between two lock() calls of one client, through the node seam with scripted
// nodes: the waiter's acquire must be sent right behind the holder's release on every
// node, while that release is still unanswered, so that each node runs the two back to
// back and the handoff costs one round trip. The scripted nodes have no pub/sub, so
// nothing but the client's own announcement can wake the waiter before its retry timer.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include <redlock/redlock.hpp>

#include "client/api/client_access.hpp"
#include "client/engine/engine.hpp"
#include "client/loop/timer.hpp"
#include "client/nodes/node.hpp"

namespace redlock::detail {
namespace {

using namespace std::chrono_literals;

/// What the test reads and steers from its own thread.
struct Observed {
  std::atomic<bool> hold_releases{false};  ///< releases stay unanswered while set
  std::atomic<int> acquires_answered{0};
  std::atomic<int> acquires_behind_release{0};  ///< acquires sent after an unanswered release
};

/// One lock node as a key-value map that answers in the order it was asked, each answer
/// on a later loop turn, like a Redis connection.
class ScriptedNode final : public Node {
 public:
  ScriptedNode(uv_loop_s* loop, std::string name, Observed& observed)
      : name_(std::move(name)), observed_(observed), timer_(Timer::create(loop)) {}
  ~ScriptedNode() override { close(); }

  const std::string& name() const noexcept override { return name_; }

  void acquire(std::string_view key, std::string_view value, std::chrono::milliseconds, bool,
               HolderTtl, std::chrono::milliseconds, NodeCallback done) override {
    for (const auto& call : queue_) {
      if (call.release && call.key == key) ++observed_.acquires_behind_release;
    }
    enqueue(false, key, std::move(done),
            [this, key = std::string(key), value = std::string(value)] {
              NodeReply reply;
              auto [it, free] = store_.try_emplace(key, value);
              if (free) {
                reply.status = NodeStatus::granted;
              } else {
                reply.status = NodeStatus::held;
                reply.holder = it->second;
                reply.remaining_ttl = 10s;
              }
              ++observed_.acquires_answered;
              return reply;
            });
  }

  void release(std::string_view key, std::string_view value, Announce, std::chrono::milliseconds,
               NodeCallback done) override {
    enqueue(true, key, std::move(done), [this, key = std::string(key), value = std::string(value)] {
      NodeReply reply;
      auto it = store_.find(key);
      const bool ours = it != store_.end() && it->second == value;
      if (ours) store_.erase(it);
      reply.status = ours ? NodeStatus::granted : NodeStatus::not_held;
      return reply;
    });
  }

  // Not used by this test.
  void extend(std::string_view key, std::string_view, std::chrono::milliseconds,
              std::chrono::milliseconds, NodeCallback done) override {
    enqueue(false, key, std::move(done), [] { return NodeReply{NodeStatus::not_held}; });
  }
  void fence(std::string_view key, std::string_view, std::uint64_t, std::chrono::milliseconds,
             NodeCallback done) override {
    enqueue(false, key, std::move(done), [] { return NodeReply{NodeStatus::not_held}; });
  }
  void inspect(std::string_view key, std::chrono::milliseconds, NodeCallback done) override {
    enqueue(false, key, std::move(done), [] { return NodeReply{NodeStatus::not_held}; });
  }

  void close() override {
    timer_.reset();
    auto pending = std::move(queue_);
    queue_.clear();
    for (auto& call : pending) call.done(NodeReply{NodeStatus::cancelled});
  }

  /// Loop thread: answers what waited behind held releases.
  void flush() { schedule(); }

 private:
  struct Call {
    bool release;
    std::string key;
    NodeCallback done;
    std::function<NodeReply()> decide;  // run when the call's turn comes
  };

  void enqueue(bool release, std::string_view key, NodeCallback done,
               std::function<NodeReply()> decide) {
    queue_.push_back({release, std::string(key), std::move(done), std::move(decide)});
    schedule();
  }

  void schedule() {
    if (timer_) timer_->start(0ms, [this] { answer_in_order(); });
  }

  void answer_in_order() {
    while (!queue_.empty()) {
      if (queue_.front().release && observed_.hold_releases) return;
      auto call = std::move(queue_.front());
      queue_.pop_front();
      call.done(call.decide());
    }
  }

  std::string name_;
  Observed& observed_;
  TimerPtr timer_;  // closed in close()
  std::deque<Call> queue_;
  std::map<std::string, std::string, std::less<>> store_;
};

template <typename Predicate>
bool eventually(Predicate predicate, std::chrono::milliseconds limit = 5s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!predicate()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

TEST(LocalHandoff, WaiterOfTheReleasingClientIsSentItsAcquireBehindTheRelease) {
  Observed observed;
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

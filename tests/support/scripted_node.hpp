#pragma once
// A lock node for tests of lib/client over the Node seam, without a server: a key-value
// map that answers in the order it was asked, each answer on a later loop turn, like a
// Redis connection. It has no pub/sub, so nothing but the client's own announcement can
// wake a waiter before its retry timer. Made by a node factory given to the Engine
// (ClientAccess); links against the library's internals (INTERNAL in the test's CMake).

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <thread>

#include "member/node.hpp"
#include "net/timer.hpp"
#include "scripts/lock_scripts.hpp"

namespace redlock::detail {

/// What a test reads and steers from its own thread.
struct ScriptedObserved {
  std::atomic<bool> hold_releases{false};  ///< releases stay unanswered while set
  std::atomic<int> acquires_answered{0};
  std::atomic<int> acquires_behind_release{0};  ///< acquires sent after an unanswered release

  /// The threads that sent acquires (the loop thread, or callers that led the loop).
  std::set<std::thread::id> acquire_threads() const {
    std::lock_guard lock(mutex);
    return senders;
  }
  void sent_acquire() {
    std::lock_guard lock(mutex);
    senders.insert(std::this_thread::get_id());
  }
  mutable std::mutex mutex;
  std::set<std::thread::id> senders;  // guarded by mutex
};

/// One lock node as a key-value map that answers in the order it was asked, each answer
/// on a later loop turn, like a Redis connection.
class ScriptedNode final : public Node {
 public:
  ScriptedNode(uv_loop_s* loop, std::string name, ScriptedObserved& observed)
      : name_(std::move(name)), observed_(observed), timer_(net::Timer::create(loop)) {}
  ~ScriptedNode() override { close(); }

  const std::string& name() const noexcept override { return name_; }

  // The exclusive lock's acquire (KEYS[1] the key, ARGV[1] the value); anything else is
  // not used by these tests and answered not_held.
  void run(const Command& command, std::chrono::milliseconds, NodeCallback&& done) override {
    const std::string key(command.keys.empty() ? std::string_view() : command.keys[0]);
    if (command.script != &scripts::acquire()) {
      return enqueue(false, key, std::move(done), [] { return NodeReply{NodeStatus::not_held}; });
    }
    for (const auto& call : queue_) {
      if (call.release && call.key == key) ++observed_.acquires_behind_release;
    }
    observed_.sent_acquire();
    enqueue(false, key, std::move(done), [this, key, value = std::string(command.args[0])] {
      NodeReply reply;
      auto [it, free] = store_.try_emplace(key, value);
      if (free) {
        reply.status = NodeStatus::granted;
      } else {
        reply.status = NodeStatus::held;
        reply.holder = it->second;
        reply.remaining_ttl = std::chrono::seconds(10);
      }
      ++observed_.acquires_answered;
      return reply;
    });
  }

  // The exclusive lock's release: KEYS[1] the key, ARGV[1] the value.
  void release(const Command& command, std::chrono::milliseconds, NodeCallback&& done) override {
    const std::string key(command.keys[0]);
    enqueue(true, key, std::move(done), [this, key, value = std::string(command.args[0])] {
      NodeReply reply;
      auto it = store_.find(key);
      const bool ours = it != store_.end() && it->second == value;
      if (ours) store_.erase(it);
      reply.status = ours ? NodeStatus::granted : NodeStatus::not_held;
      return reply;
    });
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
    if (timer_) timer_->start(std::chrono::milliseconds(0), [this] { answer_in_order(); });
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
  ScriptedObserved& observed_;
  net::TimerPtr timer_;  // closed in close()
  std::deque<Call> queue_;
  std::map<std::string, std::string, std::less<>> store_;
};

}  // namespace redlock::detail

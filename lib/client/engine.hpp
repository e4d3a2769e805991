#pragma once
// What a Client is made of: the loop thread, one Node per lock node, the validated
// options, and the registry of operations that wait on timers (so close() can cancel
// them). Client, Lock and the operations share it through shared_ptr; everything but
// the thread-safe entry points below is touched only on the loop thread.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <redlock/options.hpp>

#include "client/loop_thread.hpp"
#include "client/node.hpp"
#include "client/release_notifier.hpp"
#include "core/retry.hpp"
#include "core/validity.hpp"

namespace redlock::detail {

/// An operation that waits between rounds (retry delay, watchdog period) and must be
/// stopped when the client closes. cancel() runs on the loop thread, once.
class Cancellable {
 public:
  virtual void cancel() = 0;

 protected:
  ~Cancellable() = default;
};

/// Makes the Node for one URL (tests substitute fakes).
using NodeFactory = std::function<std::unique_ptr<Node>(uv_loop_s*, net::ConnectionOptions)>;

class Engine : public std::enable_shared_from_this<Engine> {
 public:
  /// Validates `options` (std::invalid_argument naming the field or URL) and connects.
  static std::shared_ptr<Engine> create(Options options, NodeFactory factory = make_redis_node);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // --- any thread ---------------------------------------------------------------------

  /// Runs `task` on the loop thread. Returns false once the engine closed (the task is
  /// dropped; the caller reports errc::cancelled).
  bool post(std::function<void()> task) { return loop_.post(std::move(task)); }
  bool on_loop_thread() const noexcept { return loop_.on_loop_thread(); }
  /// Cancels waiting operations, closes every node (their pending calls fail with
  /// cancelled), and stops the loop thread. Idempotent.
  void close();

  int quorum() const noexcept { return quorum_; }
  const std::vector<std::string>& node_names() const noexcept { return node_names_; }
  const Options& options() const noexcept { return options_; }
  core::DriftPolicy drift() const noexcept {
    return {options_.drift_factor, options_.drift_margin};
  }
  /// The per-node deadline for an operation on a lock of `ttl`.
  std::chrono::milliseconds node_timeout(std::chrono::milliseconds ttl) const noexcept;
  const core::RandomSource& random() const noexcept { return random_; }
  static core::Clock::time_point now() noexcept { return core::Clock::now(); }

  // --- loop thread only -----------------------------------------------------------------

  /// False once close() began: no node may be used any more.
  bool open() const noexcept { return !nodes_closed_; }
  std::vector<std::unique_ptr<Node>>& nodes() noexcept { return nodes_; }
  uv_loop_s* loop() const noexcept { return loop_.loop(); }
  void track(const std::shared_ptr<Cancellable>& operation);
  /// Wraps the callback of a release sent to a node, so that close() can give releases
  /// still on the wire a moment to land: a process that unlocks and exits at once must
  /// not leave its value on the nodes that had not answered yet.
  NodeCallback count_release(NodeCallback done);
  /// The release notifications (subscriber connections open on first use).
  ReleaseNotifier& notifier();
  /// The notifier if some lock() ever waited, else null (nobody to tell).
  ReleaseNotifier* notifier_if_started() noexcept { return notifier_.get(); }
  void untrack(const Cancellable* operation);

  Engine(Options options, std::vector<std::string> node_names, int quorum);

 private:
  void connect(const std::vector<net::ConnectionOptions>& connections, const NodeFactory& factory);

  const Options options_;
  const std::vector<std::string> node_names_;
  const int quorum_;
  core::RandomSource random_;
  std::atomic<bool> closed_{false};
  // Loop-thread state.
  bool nodes_closed_ = false;
  std::vector<std::unique_ptr<Node>> nodes_;
  int releases_in_flight_ = 0;
  std::function<void()> on_releases_landed_;
  std::vector<net::ConnectionOptions> connection_options_;
  std::unique_ptr<ReleaseNotifier> notifier_;
  std::unordered_map<const Cancellable*, std::shared_ptr<Cancellable>> waiting_;
  // Declared last so it is destroyed first: its thread must be gone before the state
  // above that the loop's callbacks touch.
  LoopThread loop_;
};

}  // namespace redlock::detail

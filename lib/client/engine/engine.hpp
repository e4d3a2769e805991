#pragma once
// What a Client is made of: the loop thread, one Node per lock node, the validated
// options, and the registry of operations that wait on timers (so close() can cancel
// them). Client, Lock and the operations share it through shared_ptr; everything but
// the thread-safe entry points below is touched only on the loop thread.

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <redlock/error.hpp>
#include <redlock/options.hpp>

#include "client/engine/release_notifier.hpp"
#include "client/engine/seams.hpp"
#include "client/loop/loop_thread.hpp"
#include "core/retry.hpp"
#include "core/validity.hpp"
#include "member/member_checks.hpp"
#include "member/node.hpp"

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
  struct LoopState;

 public:
  /// Validates `options` (std::invalid_argument naming the field or URL) and connects.
  static std::shared_ptr<Engine> create(Options options, NodeFactory factory = make_redis_node,
                                        Seams seams = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // --- any thread ---------------------------------------------------------------------

  /// Runs `task` on the loop thread. Returns false once the engine closed (the task is
  /// dropped; the caller reports errc::cancelled).
  bool post(std::function<void()> task) { return loop_.post(std::move(task)); }
  bool on_loop_thread() const noexcept { return loop_.on_loop_thread(); }
  /// For the synchronous calls that run the loop themselves (leader_followers.hpp).
  LoopThread& loop_thread() noexcept { return loop_; }
  /// True in a child process forked since create(): there every call fails with
  /// fork_error() before it touches anything of the loop (the parent's sockets and epoll
  /// set), close() does nothing, and the engine's loop state is left behind, unclosed.
  bool forked() const noexcept { return loop_.fork_guard().forked(); }
  /// True once close() was called (from any thread): from then on no call reaches the
  /// loop (calls/edges.hpp).
  bool closed() const noexcept { return closed_.load(); }
  /// errc::invalid_argument, "<what>: this Client was created in process 123 and is used
  /// in process 456 after fork(); create a new Client in the child".
  Error fork_error(std::string_view what) const {
    return Error(make_error_code(errc::invalid_argument),
                 loop_.fork_guard().message(what, "Client"));
  }
  /// Shuts the engine down, on the loop: no new operation starts (posts fail, waiting
  /// operations and watchdogs are cancelled, rounds that finish now count as cancelled and
  /// release what they got), releases already sent get up to one node deadline to land,
  /// then every node closes (their pending calls fail with cancelled) and the loop's
  /// handles close. Idempotent and safe from several threads at once.
  /// Own loop: a caller on another thread returns once the loop thread has finished; a
  /// second caller waits for the first. On the loop thread, or with the caller's loop
  /// (Options::loop), it returns at once and the shutdown completes on the loop's next
  /// turns, so it can never wait for a loop that is not running.
  void close();

  int quorum() const noexcept { return quorum_; }
  const std::vector<std::string>& node_names() const noexcept { return node_names_; }
  const Options& options() const noexcept { return options_; }
  /// Why `key` cannot be a lock's key here (core::check_key), or cannot be placed on
  /// every member (KeyPlacement): "key 'a}b' cannot be placed on cluster member <URL>: ...".
  std::optional<std::string> check_lock_key(std::string_view key) const;
  const Seams& seams() const noexcept { return seams_; }
  core::DriftPolicy drift() const noexcept {
    return {options_.drift_factor, options_.drift_margin};
  }
  /// The per-node deadline for an operation on a lock of `ttl`.
  std::chrono::milliseconds node_timeout(std::chrono::milliseconds ttl) const noexcept;
  const core::RandomSource& random() const noexcept { return random_; }
  /// random() for one who holds this engine: a source that refers to it. A copy of
  /// random() itself copies its shared state, one allocation per acquire attempt.
  core::RandomSource borrowed_random() const {
    return [source = &random_] { return (*source)(); };
  }
  static core::Clock::time_point now() noexcept { return core::Clock::now(); }
  /// A lock or extend of `ttl` against the guard's bound (Options::member_guard): a
  /// problem naming both when longest_ttl is set and `ttl` exceeds it; else the bound is
  /// raised to `ttl` if longer (longest_ttl 0), and nullopt.
  std::optional<std::string> check_guard_bound(std::chrono::milliseconds ttl) const;
  /// An extend's ttl: core::check_ttl, then check_guard_bound.
  std::optional<std::string> check_extend_ttl(std::chrono::milliseconds ttl) const;

  // --- loop thread only -----------------------------------------------------------------

  /// False once the nodes closed: nothing can be sent any more.
  bool open() const noexcept { return !state_->nodes_closed; }
  /// False once the shutdown began: no acquisition or extension may start (releases
  /// still go out while open()).
  bool accepting() const noexcept { return !state_->closing; }
  std::vector<std::unique_ptr<Node>>& nodes() noexcept { return state_->nodes; }
  uv_loop_s* loop() const noexcept { return loop_.loop(); }
  void track(const std::shared_ptr<Cancellable>& operation);
  /// Wraps the callback of a release sent to a node, so that the shutdown can give
  /// releases still on the wire a moment to land: a process that unlocks and exits at
  /// once must not leave its value on the nodes that had not answered yet.
  NodeCallback count_release(NodeCallback done);
  /// count_release for a round's releases at once, without wrapping each node's callback
  /// (an allocation per node): landed() once per node answer, or for all the nodes still
  /// out once the round no longer needs them.
  class ReleaseTally {
   public:
    void landed(int count = 1) const;

   private:
    friend class Engine;
    explicit ReleaseTally(std::shared_ptr<LoopState> state) : state_(std::move(state)) {}
    std::shared_ptr<LoopState> state_;
  };
  ReleaseTally count_releases(int count);
  /// The release notifications (subscriber connections open on first use).
  ReleaseNotifier& notifier();
  /// The notifier if some lock() ever waited, else null (nobody to tell).
  ReleaseNotifier* notifier_if_started() noexcept { return state_->notifier.get(); }
  void untrack(const Cancellable* operation);

  Engine(Options options, std::vector<std::string> node_names, int quorum, Seams seams);

 private:
  /// What the loop's callbacks touch. Shared with the shutdown, which may still be running
  /// on the loop after the Engine is gone (the caller's loop, or a close() from a callback).
  struct LoopState {
    bool closing = false;
    bool nodes_closed = false;
    std::vector<std::unique_ptr<Node>> nodes;
    int releases_in_flight = 0;
    std::function<void()> on_releases_landed;
    std::unique_ptr<ReleaseNotifier> notifier;
    std::unordered_map<const Cancellable*, std::shared_ptr<Cancellable>> waiting;
  };
  static void shut_down(const std::shared_ptr<LoopState>& state, uv_loop_s* loop,
                        std::chrono::milliseconds grace, std::function<void()> done);
  void connect(const std::vector<net::ConnectionOptions>& connections, const NodeFactory& factory);

  const Options options_;
  const std::vector<std::string> node_names_;
  KeyPlacement key_placement_;
  const int quorum_;
  const Seams seams_;
  core::RandomSource random_;
  std::atomic<bool> closed_{false};
  // The member guard's bound in ms, read by every node (core/member_life.hpp).
  std::shared_ptr<std::atomic<long long>> guard_bound_;
  std::vector<net::ConnectionOptions> connection_options_;
  std::shared_ptr<LoopState> state_ = std::make_shared<LoopState>();
  // Declared last so it is destroyed first: its thread must be gone before the state
  // above that the loop's callbacks touch.
  LoopThread loop_;
};

}  // namespace redlock::detail

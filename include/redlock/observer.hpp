#pragma once
// Hooks for operators: what every lock operation and every node connection does, as it
// happens, for metrics, traces and logs (redlock::prometheus is one user).

#include <chrono>
#include <functional>
#include <string_view>
#include <system_error>
#include <vector>

#include <redlock/error.hpp>
#include <redlock/export.hpp>

namespace redlock {

/// How one acquire attempt (one fan-out to every node) ended.
enum class AttemptOutcome {
  acquired,     ///< A quorum granted with validity left: the caller holds the lock.
  conflict,     ///< Another owner holds the key on too many nodes (errc::conflict).
  unreachable,  ///< Too many nodes down, slow or erroring (errc::quorum_unreachable).
  expired,      ///< A quorum agreed too late, no validity left (errc::validity_expired).
  cancelled,    ///< The client closed during the attempt.
};
/// "acquired", "conflict", "unreachable", "expired", "cancelled".
REDLOCK_EXPORT const char* to_string(AttemptOutcome outcome) noexcept;

/// One acquire attempt of lock(), try_lock() or lock_async().
struct AttemptEvent {
  std::string_view key;  ///< the key being locked
  int attempt = 0;       ///< 1 for the first attempt of this lock() call
  AttemptOutcome outcome = AttemptOutcome::acquired;  ///< how the attempt ended
  std::chrono::microseconds latency{0};               ///< from the attempt's start to its decision
  std::chrono::microseconds since_start{0};           ///< since lock() was called (time waited)
  int granted = 0;                                    ///< nodes that granted
  int quorum = 0;                                     ///< nodes that had to grant
  /// Per node, in the order of Options::nodes (status, Redis' text, latency).
  const std::vector<NodeOutcome>& nodes;
};

/// A lock(), try_lock() or lock_async() call ended: acquired, or given up with the last
/// attempt's outcome (or cancelled).
struct AcquireEvent {
  std::string_view key;                               ///< the key being locked
  AttemptOutcome outcome = AttemptOutcome::acquired;  ///< the last attempt's outcome
  int attempts = 0;                       ///< attempts made (0 when cancelled before one)
  std::chrono::microseconds duration{0};  ///< from the call to its result, waits included
};

/// Why a waiting lock() made its next attempt.
enum class WakeCause {
  announcement,  ///< the holder's release was announced (or handed over in this client)
  timer,         ///< the retry delay or the holder's TTL ran out, or a release was
                 ///< announced while the previous attempt was in flight
};
/// "announcement", "timer".
REDLOCK_EXPORT const char* to_string(WakeCause cause) noexcept;

/// A waiting lock() wakes up for another attempt.
struct WakeEvent {
  std::string_view key;                      ///< the key being waited for
  WakeCause cause = WakeCause::timer;        ///< what woke it
  std::chrono::microseconds since_start{0};  ///< time waited since lock() was called
};

/// Extend and release: by the caller (Lock::extend, Lock::unlock, Client::extend,
/// Client::release, ~Lock) or by the watchdog (`watchdog` true, extensions only).
enum class LockOperation { extend, release };
/// "extend", "release".
REDLOCK_EXPORT const char* to_string(LockOperation operation) noexcept;

/// One extend or release of a held lock was decided.
struct LockEvent {
  std::string_view key;                             ///< the lock's key
  LockOperation operation = LockOperation::extend;  ///< extend or release
  bool confirmed = false;  ///< a quorum of nodes extended (or no longer hold the value)
  std::chrono::microseconds latency{0};  ///< from sending to the decision
  /// Nodes that extended, or for a release that released or no longer held the value.
  int confirmed_nodes = 0;
  /// Per node, in the order of Options::nodes (status, Redis' text, latency).
  const std::vector<NodeOutcome>& nodes;
};

/// The watchdog (LockOptions::auto_extend) extended a lock, or lost it.
struct WatchdogEvent {
  std::string_view key;  ///< the lock's key
  /// The watchdog stopped: the lock is lost (errc::lock_lost), or it reached max_hold or
  /// max_extensions (errc::hold_limit_reached; valid for `validity` more), as on_lost hears.
  bool lost = false;
  const Error* error = nullptr;           ///< set when lost: why
  std::chrono::milliseconds validity{0};  ///< validity left after this round
};

/// What happened to the connection to one node. A connection is ready when TCP (and TLS)
/// is up and AUTH / SELECT, when the URL asks for them, succeeded; without them it is
/// ready at connect, so a reconnect accepted in the listen backlog of a node process that
/// is being killed reports `reconnected` and then `down` again.
enum class NodeEventKind {
  connected,        ///< the first connection (handshake included) is ready
  down,             ///< a ready connection failed: commands to it fail until it is back
  connect_failed,   ///< a reconnect attempt failed while the node was down
  reconnected,      ///< the node is back after being down
  script_reloaded,  ///< the node had lost a script (NOSCRIPT): re-sent with EVAL
  overloaded,       ///< a command refused at max_pending_per_node (error: overloaded)
  /// the member may have lost keys (a restart or failover, Options::member_guard): its
  /// grants do not count for NodeEvent::guarded_for
  guarded,
  /// a Sentinel group's member now runs on another master (a failover followed);
  /// detail names it
  master_changed,
  /// a Redis Cluster member's shard answered MOVED (the slot has another master now: a
  /// resharding or a shard failover); the command was sent to it. detail: the shard that
  /// answered and the redirection ("127.0.0.1:7001: MOVED 3999 127.0.0.1:7002")
  moved,
  /// a Redis Cluster member's shard answered ASK (its slot is being migrated); the
  /// command was sent to the importing master after ASKING. detail as for moved
  ask,
  /// a Redis Cluster member's slot map was read: at the start, and again after a MOVED,
  /// a shard's failure or a shard's reconnect. detail: "shards 127.0.0.1:7000, ..."
  slot_map_read,
  /// the member is set up so that the guard (Options::member_guard) cannot judge it as
  /// it should; told once per problem, detail says which: its server refuses INFO (an
  /// ACL user without +info), so every reconnect is taken for a restart and guarded; or
  /// its server is one another member reached first (two URLs naming one server), so it
  /// does not count
  misconfigured,
};
/// "connected", "down", "connect_failed", "reconnected", "script_reloaded", "overloaded",
/// "guarded", "master_changed", "moved", "ask", "slot_map_read", "misconfigured".
REDLOCK_EXPORT const char* to_string(NodeEventKind kind) noexcept;

/// The connection to one node changed (NodeEventKind says how).
struct NodeEvent {
  std::string_view node;                          ///< the node's URL without its password
  NodeEventKind kind = NodeEventKind::connected;  ///< what happened
  std::error_code error;    ///< down, connect_failed: the cause; overloaded: errc::overloaded
  std::string_view detail;  ///< the cause in words, or the script's name
  /// guarded: how long from now the member's grants do not count.
  std::chrono::milliseconds guarded_for{0};
};

/// Receives the events of one Client. Set it on Options::observer; every method has an
/// empty default, so an observer overrides only what it needs.
///
/// Calls come on the client's own thread (its loop thread; with Options::loop, the thread
/// that runs that loop), one at a time, in the order the events happened, never on the
/// thread of a synchronous call: the events a synchronous caller hears while it runs the
/// loop (SyncCalls::lead) are copied and told on the client's own thread. Either way a
/// synchronous call's events are told before it returns: once lock() or unlock() has
/// returned, the observer has heard its attempts and its result.
/// The events and what they point to are valid only during the call (copy what you
/// keep). A method must not block or wait for the client (it would stall every lock
/// operation of the client): count, record or hand off to another thread. It must not
/// throw. When no observer (and no log sink) is set, nothing is built or called.
class REDLOCK_EXPORT Observer {
 public:
  virtual ~Observer();
  /// Each acquire attempt (one fan-out to every node), once decided.
  virtual void on_attempt(const AttemptEvent& event);
  /// Each lock(), try_lock() or lock_async() call, once it has its result.
  virtual void on_acquire(const AcquireEvent& event);
  /// Each wake-up of a waiting lock() for another attempt.
  virtual void on_wake(const WakeEvent& event);
  /// Each extend or release of a held lock, by the caller or the watchdog, once decided.
  virtual void on_lock(const LockEvent& event);
  /// Each extension by the watchdog, and its end when the lock is lost or a limit is reached.
  virtual void on_watchdog(const WatchdogEvent& event);
  /// Each change of a node's connection.
  virtual void on_node(const NodeEvent& event);
};

/// Levels of the log lines a client writes to Options::log.
enum class LogLevel { debug, info, warning, error };
/// "debug", "info", "warning", "error".
REDLOCK_EXPORT const char* to_string(LogLevel level) noexcept;

/// Receives one line per event, without a trailing newline, naming the key or node:
///   warning: node redis://10.0.0.3:6379 down: connect 10.0.0.3:6379: connection refused
///   error: lock "orders:42" lost by the watchdog: ...
/// Same thread and contract as Observer (the client's own thread, one line at a time, in
/// order; must not block, must not throw).
using LogSink = std::function<void(LogLevel level, std::string_view line)>;

}  // namespace redlock

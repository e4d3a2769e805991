#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <redlock/error.hpp>
#include <redlock/export.hpp>
#include <redlock/inspection.hpp>
#include <redlock/lock.hpp>
#include <redlock/options.hpp>
#include <redlock/result.hpp>
#include <redlock/semaphore.hpp>

namespace redlock {

namespace detail {
class Engine;
struct ClientAccess;
}  // namespace detail

/// A Redlock client over N independent Redis masters.
///
/// Thread-safety: every method may be called from any thread. By default the client owns
/// one loop thread that does all I/O and on which every callback of the application runs
/// (async results, on_lost, the observer, the log). A synchronous method that finds the
/// client idle runs that loop on the calling thread until its answer came; one that finds
/// it busy hands its work over and waits (Options::sync_calls). Either way it must not
/// be called from the loop thread (from inside a callback): it returns
/// errc::invalid_argument there instead of deadlocking (the edge rules below).
///
/// Callback contract (every *_async method of Client, Lock and Election): the callback
/// runs exactly once, on the loop thread, never inside the call that registered it —
/// with the result, with the error of bad arguments (nothing sent), or with
/// errc::cancelled if the client closes first. Each *_async method gives the same result
/// as its synchronous form and may be called from any thread, the loop thread (inside a
/// callback) included, so a callback may chain its next call at once without nesting. A
/// callback must not block the loop; an exception it throws is caught at the loop's
/// boundary and reported on stderr (a Lock it was given is released by its destructor).
///
/// Edge rules, the same for every call that reaches the loop, sync and async, checked in
/// this order (tests/integration/call_edges_test.cpp enumerates them over every call):
///   - In a child forked since create(): the fork error, at once (see fork() below).
///   - A moved-from Lock (or Leadership) has no client to reach: its calls answer at once,
///     a callback on the calling thread, inside the call: extend() and extend_async()
///     with errc::not_held, unlock() and unlock_async() with success (nothing to release),
///     ReentrantLock and Leadership::resign() with errc::not_held.
///   - After close() (from any thread, the loop thread included): every synchronous call
///     returns errc::cancelled, and every callback runs at once on the calling thread,
///     inside the call, with errc::cancelled; nothing is sent. Lock::unlock() of a lock
///     whose release a quorum confirmed still succeeds (nothing to release).
///   - On the loop thread (inside a callback) a synchronous call would wait for itself:
///     it returns errc::invalid_argument and sends nothing (a Lock's destructor releases
///     there without waiting).
///   - Bad arguments: errc::invalid_argument (an async call's on the loop thread).
///   - An empty callback means nobody is told: an acquisition (every *_async method that
///     yields a Lock, and Election::campaign_async) then does nothing, since nobody would
///     hold what it took; every other call (extend, release, unlock, status, inspect) runs
///     as it would with a callback. Nothing is called, thrown or reported.
///
/// fork(): a client belongs to the process that created it. A child forked from it
/// inherits the parent's connections and loop but not the loop thread, and must not use
/// them: there every synchronous call of the client, of its Locks (and of a FencedStore)
/// returns errc::invalid_argument ("lock \"k\": this Client was created in process 123
/// and is used in process 456 after fork(); create a new Client in the child") without
/// sending or reading anything, and every *_async callback runs at once on the calling
/// thread with that error. close() does nothing there, and the destructors neither block
/// nor touch the parent's connections: they leave the client's memory behind. The parent
/// is not affected. A child that needs locks creates its own Client.
class REDLOCK_EXPORT Client {
 public:
  /// Receives the result of an asynchronous acquire (lock_async() and the like).
  using LockCallback = std::function<void(Result<Lock>)>;
  /// Receives the per-node outcomes of status_async().
  using StatusCallback = std::function<void(Result<std::vector<NodeOutcome>>)>;
  /// Receives the per-node views of inspect_async().
  using InspectCallback = std::function<void(Result<std::vector<NodeView>>)>;
  /// Receives the result of an operation that returns nothing (release_async()).
  using DoneCallback = std::function<void(Result<void>)>;
  /// Receives the new validity of extend_async().
  using ExtendCallback = std::function<void(Result<std::chrono::milliseconds>)>;

  /// Validates `options` (throws std::invalid_argument naming the bad field or URL),
  /// starts the loop thread and begins connecting to every node.
  static std::shared_ptr<Client> create(Options options);

  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// One attempt: send the acquire to all nodes at once, decide as soon as the outcome is
  /// settled. errc::conflict when held by another with a quorum reachable (also with a
  /// minority of nodes down), errc::quorum_unreachable when more than N - quorum nodes
  /// failed; the error then lists every node's outcome (the round waits for each node's
  /// answer or deadline).
  Result<Lock> try_lock(std::string_view key, std::chrono::milliseconds ttl);
  /// try_lock() without waiting; see the callback contract above.
  void try_lock_async(std::string_view key, std::chrono::milliseconds ttl, LockCallback callback);
  /// Attempts until acquired or `options.wait` has passed (one attempt when wait is 0).
  /// While waiting it is woken by the holder's release (no polling); a release wakes the
  /// longest-waiting lock() of this client on the key, not all of them, and a lock() that
  /// finds others of this client waiting makes its first attempt in its turn. Holders that
  /// never announce a release (other Redlock clients, a crashed process) are re-checked by
  /// the key's longest-waiting lock() of this client after half the retry_delay (plus
  /// jitter) while the holder changes, backing off to once a second while one holder
  /// stays. Every failed
  /// attempt is retried until the deadline, quorum_unreachable included (a node may come
  /// back; such attempts back off from retry_delay to once a second) unless
  /// LockOptions::fail_fast; the error returned is the last attempt's. Every acquisition
  /// below (read_lock, write_lock, acquire_permit, lock_all) runs this same acquisition
  /// and honours every LockOptions field the same way; only its scripts and quorum differ.
  /// LockOptions::stop cancels the call (errc::cancelled) from any thread.
  Result<Lock> lock(std::string_view key, const LockOptions& options);
  /// lock() without waiting; see the callback contract above. LockOptions::stop cancels it:
  /// the callback then runs with errc::cancelled (still exactly once).
  void lock_async(std::string_view key, LockOptions options, LockCallback callback);

  /// One permit of the counting semaphore `key` (see SemaphoreOptions): acquired when a
  /// quorum of semaphore_quorum(K) nodes each had fewer than K live holders. Waiting,
  /// retries, validity, extend(), unlock(), the watchdog and the per-node outcomes are
  /// the lock()'s; the returned Lock has no fencing token. errc::conflict when the
  /// permits are taken, errc::wrong_kind when `key` is used as another kind of lock,
  /// errc::invalid_argument for K < 1, an unsafe quorum or bad lock options.
  Result<Lock> acquire_permit(std::string_view key, const SemaphoreOptions& options);
  /// acquire_permit() without waiting; `callback` as for lock_async().
  void acquire_permit_async(std::string_view key, SemaphoreOptions options, LockCallback callback);
  /// A shared hold of the read-write lock `key` (flock -s): granted while no writer holds
  /// or waits for the key on a majority of nodes. Readers share; each reader's hold
  /// expires on its own on every node, and its extend()/unlock() touch only its own.
  /// A writer that waits keeps new readers out (see write_lock), so a reader may wait
  /// for a writer even when only readers hold the key. `options.fencing` must be false.
  /// errc::conflict when a writer holds or waits, errc::wrong_kind when `key` is used as
  /// another kind of lock. Everything else as lock().
  Result<Lock> read_lock(std::string_view key, const LockOptions& options);
  /// read_lock() without waiting for the result; `callback` as for lock_async().
  void read_lock_async(std::string_view key, LockOptions options, LockCallback callback);
  /// The exclusive hold of the read-write lock `key` (flock -x): granted while no reader
  /// and no other writer holds the key on a majority of nodes. While it waits, each of
  /// its attempts leaves an intent on the nodes where readers still hold the key, which
  /// keeps new readers out there for 4 x (retry_delay + retry_jitter), at least 250 ms
  /// and at most the ttl, and is refreshed by its next attempt (due within half that) —
  /// so a stream of overlapping readers cannot starve it. With `options.fencing` the
  /// writer gets a fencing token greater than every earlier writer's of the key.
  Result<Lock> write_lock(std::string_view key, const LockOptions& options);
  /// write_lock() without waiting for the result; `callback` as for lock_async().
  void write_lock_async(std::string_view key, LockOptions options, LockCallback callback);

  /// Exclusive locks on every key of `keys`, taken as one: on each node all of them or
  /// none, in one script, so two callers locking overlapping sets in any order never
  /// deadlock (a failed attempt keeps nothing, on any node). On a Redis Cluster member, a
  /// set spread over slots is one script per slot, and the member grants it only when
  /// every slot did: the keys of the slots that granted are released at once when another
  /// refused. Each key is an exclusive
  /// lock's key, so lock_all() and lock() exclude each other key by key. Quorum,
  /// validity, waiting, extend(), unlock() and the watchdog as lock(); a waiter is woken
  /// by releases of the first key and otherwise retries every retry_delay. errc::conflict
  /// names a held key, its holder and the node; errc::invalid_argument for an empty set
  /// or a duplicate key. With `options.fencing` every key gets a token of its own
  /// (Lock::fencing_token(key)), greater than every earlier holder's of that key, whether
  /// that holder locked it alone or in a set; Lock::fencing_token() stays empty.
  Result<Lock> lock_all(std::span<const std::string> keys, const LockOptions& options);
  /// lock_all() without waiting for the result; `callback` as for lock_async().
  void lock_all_async(std::span<const std::string> keys, LockOptions options,
                      LockCallback callback);

  /// The quorum acquire_permit() uses for `permits` with `quorum` (0 = the smallest safe
  /// one) on this client's nodes, or errc::invalid_argument saying why it is unsafe.
  Result<int> semaphore_quorum(int permits, int quorum = 0) const;

  /// Per node: the current holder's value and remaining TTL (NodeStatus::held), or
  /// NodeStatus::not_held when the key is free there, or the node's error. Exclusive
  /// locks only: on a key of another kind each node answers redis_error with
  /// errc::wrong_kind; inspect() reads every kind.
  Result<std::vector<NodeOutcome>> status(std::string_view key);
  /// status() without waiting; see the callback contract above.
  void status_async(std::string_view key, StatusCallback callback);
  /// Per node, in the order of Options::nodes: which kind of lock `key` is there and every
  /// live holder with its remaining TTL — an exclusive lock's owner, a semaphore's permit
  /// holders, a read-write lock's readers, writer and waiting writers' intents (see
  /// NodeView). Whatever the key is, no node fails with a type error. Reads only; waits
  /// for every node, each up to the node timeout (200 ms when none is configured). A
  /// semaphore's K is not shown: the nodes do not store it (each acquire carries its own).
  /// errc::invalid_argument for a bad key.
  Result<std::vector<NodeView>> inspect(std::string_view key);
  /// inspect() without waiting; see the callback contract above.
  void inspect_async(std::string_view key, InspectCallback callback);
  /// Owner-checked release of `key` held by `value` (for a lock taken by another process).
  Result<void> release(std::string_view key, std::string_view value);
  /// release() without waiting; see the callback contract above.
  void release_async(std::string_view key, std::string_view value, DoneCallback callback);
  /// Owner-checked extension of `key` held by `value`; returns the new validity.
  Result<std::chrono::milliseconds> extend(std::string_view key, std::string_view value,
                                           std::chrono::milliseconds ttl);
  /// extend() without waiting; the callback gets the new validity. See the callback
  /// contract above.
  void extend_async(std::string_view key, std::string_view value, std::chrono::milliseconds ttl,
                    ExtendCallback callback);

  /// Shuts the client down: waiting lock() calls end with errc::cancelled and the
  /// watchdogs stop (on_lost is not called; locks still held expire by their TTL); an
  /// acquisition that completes meanwhile is released, not handed out; releases already
  /// sent (an unlock_async() just before, even in the same callback) get up to one node
  /// deadline plus 50 ms to be confirmed: an unlock until it is confirmed on enough nodes
  /// that no quorum can still hold the value, a failed attempt's clean-up on the nodes
  /// that answered the attempt. The rest is not waited for: it is written on its
  /// connection, which closes with a FIN behind it, so a slow node still applies it and
  /// a silent one (paused, cut off) applies it when it wakes, or the TTL ends it. Then
  /// the connections close and every pending callback runs with errc::cancelled. After
  /// close, calls fail with errc::cancelled and async callbacks run at once on the calling
  /// thread. Idempotent, and safe from several threads at once: from another thread it
  /// returns when the shutdown is complete (a second caller waits for the first); on the
  /// loop thread, and always with Options::loop, it returns at once and the shutdown
  /// completes on the loop's next turns. Also done by the destructor. Does nothing in a
  /// child forked since create() (see fork() above).
  void close();

  /// The number of nodes that must agree.
  int quorum() const noexcept;
  /// The node URLs, passwords removed.
  const std::vector<std::string>& nodes() const noexcept;

 private:
  // Made only by create() (and, inside the library and its tests, over an engine with
  // scripted nodes): no public constructor takes a library-internal type.
  friend struct detail::ClientAccess;
  explicit Client(std::shared_ptr<detail::Engine> engine);

  std::shared_ptr<detail::Engine> engine_;
};

}  // namespace redlock

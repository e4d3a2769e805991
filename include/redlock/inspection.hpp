#pragma once
// What a key is on each node, whatever kind of lock uses it (Client::inspect).

#include <chrono>
#include <string>
#include <vector>

#include <redlock/error.hpp>
#include <redlock/export.hpp>

namespace redlock {

/// The kind of lock a key serves on one node (a key serves one kind: docs/kinds.md).
enum class LockKind {
  unknown,     ///< The node did not answer; NodeView::outcome says why.
  none,        ///< The key does not exist on the node: nothing holds it there.
  exclusive,   ///< An exclusive lock: lock(), try_lock(), or one key of lock_all().
  semaphore,   ///< A counting semaphore: acquire_permit().
  read_write,  ///< A read-write lock: read_lock(), write_lock().
  other,       ///< A Redis type no lock of this library uses (a list, a set...).
};

/// "unknown", "none", "exclusive", "semaphore", "read_write", "other".
REDLOCK_EXPORT const char* to_string(LockKind kind) noexcept;

/// What a holder is to the lock of its key.
enum class HolderRole {
  owner,   ///< The holder of an exclusive lock.
  permit,  ///< One holder of a semaphore's permits.
  reader,  ///< A shared hold of a read-write lock.
  writer,  ///< The exclusive hold of a read-write lock.
  intent,  ///< A waiting writer's intent, which keeps new readers out of the node until it
           ///< ends; its value is the intent's id, not a lock value.
};

/// "owner", "permit", "reader", "writer", "intent".
REDLOCK_EXPORT const char* to_string(HolderRole role) noexcept;

/// One live holder of a key on one node.
struct KeyHolder {
  HolderRole role = HolderRole::owner;  ///< What kind of holder it is.
  std::string value;  ///< The holder's lock value (Lock::value()), or an intent's id.
  /// Time left on the node's clock; -1 for an exclusive lock's key without expiry.
  std::chrono::milliseconds remaining_ttl{-1};
};

/// One node's view of a key.
struct NodeView {
  /// The node's name, latency and status: NodeStatus::held when some owner, permit
  /// holder, reader or writer is live there (an intent alone holds nothing),
  /// NodeStatus::not_held when none is, or the node's error (timeout, connection_error,
  /// redis_error...). For an exclusive lock `holder` and `remaining_ttl` are set as by
  /// Client::status(). A key of kind `other` is redis_error with errc::wrong_kind and a
  /// detail naming its Redis type.
  NodeOutcome outcome;
  LockKind kind = LockKind::unknown;  ///< What kind of lock the key is on this node.
  /// Every live holder: writers, then readers, then intents, each group ordered by value;
  /// a semaphore's permits in order of expiry, the soonest first. Expired entries the
  /// node still keeps are left out (inspecting writes nothing to the node).
  std::vector<KeyHolder> holders;
  /// For a Sentinel group (a redis-sentinel:// node): the master that answered, e.g.
  /// "master 'orders' at 10.0.0.7:6380 (named by sentinel 10.0.0.1:26379)", or the
  /// sentinel or master the member was trying when it failed. For a Redis Cluster (a
  /// redis-cluster:// node): its shards' masters as its slot map last named them, e.g.
  /// "shards 10.0.0.7:7000, 10.0.0.8:7000, 10.0.0.9:7000" (the URL before the map is
  /// known). Empty for other nodes.
  std::string served_by;
  /// For a member in its guard period (Options::member_guard: it restarted or failed over
  /// and may have lost keys), why and for how much longer its grants do not count, e.g.
  /// "not counted: guarded for another 812 ms (run_id changed across a reconnect: ...)".
  /// Empty while its grants count.
  std::string guard;
};

}  // namespace redlock

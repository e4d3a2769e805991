#pragma once
// What a Lock of the family holds, and the rounds that extend and release it. The
// exclusive lock on one key is described by no Held at all (LockState::held is null), so
// its code paths are unchanged; every other primitive carries one, and the overloads of
// start_extend/start_release below send that primitive's scripts with its quorum.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <redlock/error.hpp>

#include "client/util/function_ref.hpp"
#include "member/node.hpp"

namespace redlock::detail {

struct LockState;
struct RoundResult;

enum class Primitive {
  permit,  ///< one of K permits of a counting semaphore
  reader,  ///< a shared hold of a read-write lock
  writer,  ///< the exclusive hold of a read-write lock
  keys,    ///< exclusive locks on several keys taken as one
};

struct Held {
  Primitive primitive = Primitive::permit;
  /// The key the scripts act on (the one key of a semaphore or read-write lock; the
  /// first of a key set, whose channel a waiter listens on).
  std::string key;
  /// Key set: every key, in the caller's order, without duplicates.
  std::vector<std::string> keys;
  /// Semaphore: K.
  int permits = 0;
  /// Nodes that must agree in every round on this lock (acquire, extend, release).
  int quorum = 0;
  /// Writer: the id of its intent entry, the same for every attempt of one acquisition
  /// (a waiting writer keeps new readers out, scripts/family_scripts.hpp), and how long
  /// one attempt's intent lasts on a node unless refreshed by the next attempt.
  std::string intent;
  std::chrono::milliseconds intent_ttl{0};

  /// How messages name it, e.g. `semaphore "pool" (3 permits)`.
  std::string describe() const;
};

/// The acquire, extend and release scripts of `held` for `value` on one node.
void send_family_acquire(Node& node, const Held& held, std::string_view value,
                         std::chrono::milliseconds ttl, bool fencing,
                         std::chrono::milliseconds timeout, NodeCallback done);
void send_family_extend(Node& node, const Held& held, std::string_view value,
                        std::chrono::milliseconds ttl, std::chrono::milliseconds timeout,
                        NodeCallback done);
/// A writer's release withdraws its intent too unless `keep_intent` (a failed attempt
/// that will be retried: the intent must keep new readers out meanwhile).
void send_family_release(Node& node, const Held& held, std::string_view value, Announce announce,
                         std::chrono::milliseconds timeout, NodeCallback done,
                         bool keep_intent = false);
/// Writer with fencing: raises the node's counter to `token` if `value` still writes.
void send_family_fence(Node& node, const Held& held, std::string_view value, std::uint64_t token,
                       std::chrono::milliseconds timeout, NodeCallback done);

/// Key set with fencing: raises each key's counter to its token (`tokens` in the order of
/// held.keys) if `value` still holds every key on the node.
void send_key_set_fence(Node& node, const Held& held, std::string_view value,
                        const std::vector<std::uint64_t>& tokens, std::chrono::milliseconds timeout,
                        NodeCallback done);

/// Reads the reply of a family script (scripts/family_scripts.hpp).
NodeReply interpret_family_reply(const redisReply* reply, std::string_view where);

}  // namespace redlock::detail

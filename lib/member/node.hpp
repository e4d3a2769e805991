#pragma once
// The seam between the algorithm and I/O: what one lock node can be asked. Each call is
// asynchronous with its own deadline, and its callback runs exactly once on the loop
// thread, never from inside the call. The Redis implementation adapts a net::Connection
// and the Lua scripts; anything else (a scripted fake) can stand in for it.

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <redlock/error.hpp>
#include <redlock/inspection.hpp>

#include "core/member_life.hpp"
#include "net/connection.hpp"
#include "scripts/script.hpp"

struct uv_loop_s;

namespace redlock::detail {

/// Whether a release tells waiters. A holder's release does: the key is free for them.
/// So do the leftovers of a failed attempt whose value may sit on a quorum (others saw it
/// as the holder; RoundResult::may_hold_quorum). Those of a split vote do not: announcing
/// them would wake every client's waiter at once, all retrying in step (the synchronised
/// retries the jittered retry delay exists to break).
enum class Announce : bool { no = false, yes = true };

/// One node's answer, already interpreted.
///   acquire: granted (token) | held (holder, remaining_ttl)
///   release, extend, fence: granted | not_held
///   inspect: held (holder, remaining_ttl) | not_held
///   key inspect (any kind): held | not_held, with kind and holders
///   any: timeout | connection_error | redis_error | cancelled, with error and detail.
struct NodeReply {
  NodeStatus status = NodeStatus::pending;
  std::error_code error;
  std::string detail;
  std::string holder;
  std::chrono::milliseconds remaining_ttl{-1};
  std::uint64_t token = 0;
  /// A key set's grant with fencing: one token per key, in the set's order.
  std::vector<std::uint64_t> tokens;
  LockKind kind = LockKind::unknown;
  std::vector<KeyHolder> holders;
  /// A grant's replica acknowledgements (WAIT), when the node was asked for them
  /// (Node::require_replica_acks); required 0 otherwise.
  core::ReplicaAcks acks;
  /// A failure before the command left this client (net::ReplyView::unsent): the node
  /// surely did not apply it.
  bool unsent = false;
  /// The guard of the server that answered, where the member has several (a Redis
  /// Cluster's shard masters, core/sharded_member_life.hpp); null: the member's,
  /// Node::guard(). Valid while the node lives.
  const core::MemberGuard* guard = nullptr;
};

using NodeCallback = std::function<void(NodeReply&&)>;

/// How an acquire refused by another holder learns the holder's remaining TTL
/// (NodeReply::remaining_ttl) where the node cannot answer it atomically with the refusal
/// (member/acquire_reply.hpp: a plain SET instead of the acquire script).
enum class HolderTtl : bool {
  /// Asked after a refusal: one more round trip on that node, none on a grant. For single
  /// attempts, which only report it.
  after_refusal,
  /// Asked in the same write as the attempt, for a waiter, which sleeps on it: its failed
  /// attempts take no longer for it.
  with_attempt,
};
/// Turns the reply of a lock-family script into a NodeReply; `where` names the node.
using FamilyInterpreter = NodeReply (*)(const redisReply* reply, std::string_view where);

/// The KEYS and ARGV of one script call. The views point into the caller's strings, which
/// outlive the call, or into `owned`, for texts made for it (a fence counter's name, a
/// token in decimal).
struct ScriptCall {
  std::vector<std::string_view> keys;
  std::vector<std::string_view> args;
  std::deque<std::string> owned;
  std::string_view own(std::string text) { return owned.emplace_back(std::move(text)); }
};

/// How the replies of a key set call's parts make the member's one reply (KeySetScript).
enum class KeySetCall { acquire, extend, release, fence };

/// A lock-family script over the keys of a key set. A member may run it in parts, each on
/// some of the set's keys (a member whose server runs a script only on keys it can place
/// together); its one reply grants the set only when every part granted. `part` writes the
/// KEYS and ARGV of the part made of the set's keys at `positions` (in the set's order), on
/// the loop thread, before run_key_set returns.
struct KeySetScript {
  KeySetCall call = KeySetCall::acquire;
  const scripts::Script* script = nullptr;
  std::function<void(std::span<const std::size_t> positions, ScriptCall& out)> part;
  /// acquire: releases a part that granted when another part did not, so that no member
  /// keeps a part of a set it did not grant as a whole. Not announced.
  const scripts::Script* undo_script = nullptr;
  std::function<void(std::span<const std::size_t> positions, ScriptCall& out)> undo;
};

class Node {
 public:
  virtual ~Node() = default;

  /// The node's URL without its password.
  virtual const std::string& name() const noexcept = 0;
  /// For a member whose server changes (a Sentinel group): the server it talks to now,
  /// as its errors name it ("master 'm' at 10.0.0.7:6380 (named by sentinel ...)"); for a
  /// Redis Cluster its shards' masters ("shards 10.0.0.7:7000, 10.0.0.8:7000"). Empty for
  /// a node that is one fixed server.
  virtual std::string serving() const { return {}; }
  /// The name of `key`'s fencing counter on this member: key + ":fence"; on a Redis
  /// Cluster member a name in the key's slot (net::slot_companion), the same for every
  /// kind of holder of the key.
  virtual std::string fence_key(std::string_view key) const;
  /// The name of another key kept beside `key` (key + `suffix`, e.g. the election's
  /// leader record), placed like fence_key(): in the key's slot on a Redis Cluster member.
  virtual std::string companion_key(std::string_view key, std::string_view suffix) const;
  /// The argument by which the release and proclaim scripts announce on this member
  /// (scripts/family_scripts.hpp): "0" not at all; else how its servers publish, "1" to
  /// every subscriber, "s" on the key's shard alone.
  virtual std::string_view announce_argument(Announce announce) const noexcept {
    return announce == Announce::no ? "0" : "1";
  }

  virtual void acquire(std::string_view key, std::string_view value, std::chrono::milliseconds ttl,
                       bool fencing, HolderTtl holder_ttl, std::chrono::milliseconds timeout,
                       NodeCallback done) = 0;
  /// `announce`: publish the release on "<key>:released" for waiters (see Announce).
  virtual void release(std::string_view key, std::string_view value, Announce announce,
                       std::chrono::milliseconds timeout, NodeCallback done) = 0;
  virtual void extend(std::string_view key, std::string_view value, std::chrono::milliseconds ttl,
                      std::chrono::milliseconds timeout, NodeCallback done) = 0;
  virtual void fence(std::string_view key, std::string_view value, std::uint64_t token,
                     std::chrono::milliseconds timeout, NodeCallback done) = 0;
  virtual void inspect(std::string_view key, std::chrono::milliseconds timeout,
                       NodeCallback done) = 0;
  /// Runs a script of the lock family (scripts/family_scripts.hpp); a reply that is not a
  /// transport or Redis error is handed to `interpret`. Nodes that only speak the
  /// exclusive lock (test fakes) keep this default, which answers redis_error at once,
  /// from inside the call.
  virtual void run_family_script(const scripts::Script& script,
                                 std::span<const std::string_view> keys,
                                 std::span<const std::string_view> args,
                                 std::chrono::milliseconds timeout, FamilyInterpreter interpret,
                                 NodeCallback done);

  /// A release by a family script: as run_family_script, and like release() sent again
  /// after a reconnect (or a retry interval) when it may not have reached the node.
  virtual void release_by_script(const scripts::Script& script,
                                 std::span<const std::string_view> keys,
                                 std::span<const std::string_view> args,
                                 std::chrono::milliseconds timeout, FamilyInterpreter interpret,
                                 NodeCallback done) {
    run_family_script(script, keys, args, timeout, interpret, std::move(done));
  }

  /// Runs `script` over the set's `keys` (a release as release_by_script, the other
  /// calls as run_family_script) and answers once for the set. This default runs it in one
  /// part; a member that must split it overrides this (member/key_set_parts.hpp).
  virtual void run_key_set(std::span<const std::string> keys, const KeySetScript& script,
                           std::chrono::milliseconds timeout, FamilyInterpreter interpret,
                           NodeCallback done);

  /// Starts following the member's server's life (core/member_life.hpp) under `rules`,
  /// before any lock command is sent. Nodes that cannot tell (test fakes) keep this
  /// default, which does nothing: their guard() never guards.
  virtual void watch_start(core::MemberLife::Rules rules) { (void)rules; }
  /// Whether this member's grants count now (core/member_guard.hpp).
  virtual const core::MemberGuard& guard() const noexcept;
  /// From now on, every call that may grant (acquire, extend, fence, a family script) is
  /// followed by WAIT `replicas`, and its grant's NodeReply::acks says how many replicas
  /// acknowledged it. Nodes that cannot ask (test fakes) keep this default, which does
  /// nothing: their grants never carry a requirement.
  virtual void require_replica_acks(int replicas) { (void)replicas; }

  /// Some call is not written to the member yet and will be once its connection is
  /// ready (client shutdown waits for it, Client::close()). Test fakes keep false.
  virtual bool has_unwritten() const noexcept { return false; }

  /// Fails every pending call with cancelled and stops reconnecting. Calls made
  /// afterwards are answered cancelled too, exactly once, on a later loop turn.
  virtual void close() = 0;
};

/// A Node over one libuv connection to a Redis master. Loop thread only.
std::unique_ptr<Node> make_redis_node(uv_loop_s* loop, net::ConnectionOptions options);

/// Brackets the sends of one round (run_round) on the loop thread: while it lives, every
/// node is asked the same thing with the same arguments, so the nodes made by
/// make_redis_node encode each command once and copy it for the others
/// (net::SharedCommand). A bracket inside another shares nothing.
class FanOut {
 public:
  FanOut() noexcept;
  ~FanOut();
  FanOut(const FanOut&) = delete;
  FanOut& operator=(const FanOut&) = delete;
};

/// The reply of a node where the key is of Redis type `redis_type`, i.e. in use as
/// another kind of lock: redis_error with errc::wrong_kind and a detail naming the kind.
NodeReply wrong_kind_reply(std::string_view redis_type);

/// What a call's callback gets when its command failed (timeout, connection, Redis error).
NodeReply failed_call(const net::ReplyView& view);

/// A reply of a shape `what` (e.g. "the acquire script") never gives: a protocol error
/// naming the node and the reply.
NodeReply unexpected_reply_to(std::string_view what, const redisReply* reply,
                              std::string_view where);

/// A reply to a lock script in words for error details, e.g. "array of 2: [1, \"x\"]".
std::string describe_reply(const redisReply* reply);

}  // namespace redlock::detail

#pragma once
// The seam between the algorithm and I/O: what one lock node can be asked. Each call is
// asynchronous with its own deadline, and its callback runs exactly once on the loop
// thread, never from inside the call. A node is asked to run a Command (a script with its
// keys and arguments, assembled by the caller: a lock kind's in client/kinds/kind.hpp) or
// to release by one; what it adds is the member's: where the names kept beside a key go,
// how a release is announced, the plain command that stands for the exclusive acquire's
// script, re-sending a release that may not have arrived. The Redis implementation adapts
// a net::Connection; anything else (a scripted fake) can stand in for it.

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
#include "core/small_function.hpp"
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

/// One node's answer, already interpreted (Command::read).
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

/// A node call's callback. A round's captures its state and the node's index, which move
/// as bytes through the node's calls (core/small_function.hpp); larger closures go on the
/// heap.
using NodeCallback = core::SmallFunction<void(NodeReply&&), 16>;

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

/// Turns the reply to a Command's script into a NodeReply; `where` names the node. Called
/// only for a reply that is not a transport or Redis error.
using ReplyReader = NodeReply (*)(const redisReply* reply, std::string_view where);

/// One call on a member: a script with its KEYS and ARGV and how its reply reads. A lock
/// kind assembles its calls (client/kinds/kind.hpp), the election and the inspection
/// theirs; a Node only sends them. The views point into the caller's strings, which
/// outlive the call to Node::run or Node::release (not the call's reply).
struct Command {
  const scripts::Script* script = nullptr;
  std::span<const std::string_view> keys;
  std::span<const std::string_view> args;
  ReplyReader read = nullptr;
  /// The exclusive acquire without fencing (scripts::acquire() with ARGV[3] "0"): a node
  /// whose server takes SET with NX and GET (Redis 7.0 and later) sends SET KEYS[1]
  /// ARGV[1] NX PX ARGV[2] GET instead of the script, for the same effect and NodeReply at
  /// less than half its cost on the server (member/acquire_reply.hpp); a refusal's TTL
  /// is then asked as `holder_ttl` says.
  bool by_set_nx_get = false;
  HolderTtl holder_ttl = HolderTtl::after_refusal;
  /// Every member of a round is sent the same KEYS and ARGV with this script (nothing in
  /// them is named per member, as a fencing counter or an announce argument is): while a
  /// FanOut lives, a node may encode the command once for all of them.
  bool same_for_every_member = false;
  /// A grant may come of it, so a node asked for replica acknowledgements
  /// (Node::require_replica_acks) follows it with a WAIT. False: no WAIT (the exclusive
  /// lock's status read, which never grants).
  bool may_grant = true;
};

/// The KEYS and ARGV of one script call, owning the texts made for it. The views point
/// into the caller's strings, which outlive the call, or into `owned`, for texts made for
/// it (a fence counter's name, a token in decimal).
struct ScriptCall {
  std::vector<std::string_view> keys;
  std::vector<std::string_view> args;
  std::deque<std::string> owned;
  std::string_view own(std::string text) { return owned.emplace_back(std::move(text)); }
  /// The Command of `script` over these keys and arguments (valid while this lives).
  Command command(const scripts::Script& script, ReplyReader read) const {
    Command command;
    command.script = &script;
    command.keys = keys;
    command.args = args;
    command.read = read;
    return command;
  }
};

/// How the replies of a key set call's parts make the member's one reply (KeySetScript).
enum class KeySetCall { acquire, extend, release, fence };

/// A script of a key set over its keys. A member may run it in parts, each on some of
/// the set's keys (a member whose server runs a script only on keys it can place
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
  /// (scripts/kind_scripts.hpp): "0" not at all; else how its servers publish, "1" to
  /// every subscriber, "s" on the key's shard alone.
  virtual std::string_view announce_argument(Announce announce) const noexcept {
    return announce == Announce::no ? "0" : "1";
  }

  /// The channel an announced release of `key` is published on where it is not
  /// "<key>:released" to every subscriber (a cluster member's: the key's shard alone, on
  /// that name placed in the key's slot, announce_argument() "s"); empty for that. Valid
  /// until the next call on this thread.
  virtual std::string_view release_channel(std::string_view key) const {
    (void)key;
    return {};
  }

  /// Runs `command` on the member: its script, or the plain command that stands for it.
  virtual void run(const Command& command, std::chrono::milliseconds timeout,
                   NodeCallback&& done) = 0;
  /// Runs the owner-checked release `command`, which a node also sends again after a
  /// reconnect (or a retry interval) when it may not have reached the member: idempotent,
  /// it must reach a node that missed it, or the node keeps the holder's entry until its
  /// TTL ends. Its announcement (if any) is in its script and arguments (see Announce).
  virtual void release(const Command& command, std::chrono::milliseconds timeout,
                       NodeCallback&& done) = 0;

  /// Runs `script` over the set's `keys` (a release as release(), the other calls as
  /// run()) and answers once for the set. This default runs it in one part; a member that
  /// must split it overrides this (member/key_set_parts.hpp).
  virtual void run_key_set(std::span<const std::string> keys, const KeySetScript& script,
                           std::chrono::milliseconds timeout, ReplyReader read, NodeCallback done);

  /// Starts following the member's server's life (core/member_life.hpp) under `rules`,
  /// before any lock command is sent. Nodes that cannot tell (test fakes) keep this
  /// default, which does nothing: their guard() never guards.
  virtual void watch_start(core::MemberLife::Rules rules) { (void)rules; }
  /// Whether this member's grants count now (core/member_guard.hpp).
  virtual const core::MemberGuard& guard() const noexcept;
  /// From now on, every call that may grant (Command::may_grant) is followed by WAIT
  /// `replicas`, and its grant's NodeReply::acks says how many replicas
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

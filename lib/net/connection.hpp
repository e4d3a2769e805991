#pragma once
// One asynchronous connection to one Redis node, on a libuv loop.
//
// libuv owns the sockets, timers and DNS. Commands are encoded by our own
// net/command_encoder.hpp; hiredis only parses replies (its redisReader, bounded by
// net/reply_reader.hpp). The rules of the pipeline live in net/pipeline.hpp, the
// AUTH/SELECT handshake in net/handshake.hpp; this class is the libuv shell around them.
// Everything here runs on the loop thread: no method may be called from another thread.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

#include <redlock/options.hpp>

#include "core/random_source.hpp"
#include "net/closing.hpp"
#include "net/endpoint.hpp"
#include "net/reply.hpp"

struct redisReply;
struct uv_loop_s;

namespace redlock::scripts {
struct Script;
}

namespace redlock::net {

struct SharedCommand;
class Connection;

/// What a cluster's router tells of one of its shard masters' connections
/// (ConnectionOptions::on_shard).
enum class ShardEvent {
  /// Made while the router first meets the cluster: for a seed, or for a master of the
  /// first slot map.
  met,
  /// Made for a master that appeared later (a replica promoted by a failover, a node that
  /// was given slots): a server this client never met while it held keys of the member.
  appeared,
  /// The connection became ready (each time, the first included): who the server is must
  /// be asked again.
  ready,
  /// The server owns no slot in the latest slot map: it holds none of the member's keys,
  /// so its start does not matter (nor that it cannot say it, being down) until it owns
  /// slots again.
  left,
  /// The server owns slots again after a map in which it had none. Its connection may have
  /// stayed open across a demotion and a promotion: who it is must be asked again.
  regained,
};

struct ConnectionOptions {
  Endpoint endpoint;
  std::chrono::milliseconds connect_timeout{1000};
  /// The reconnect backoff (core::Backoff, full jitter): the wait after the first failure
  /// is drawn from [0, reconnect_min], the span doubling per consecutive failure up to
  /// reconnect_max.
  std::chrono::milliseconds reconnect_min{10};
  std::chrono::milliseconds reconnect_max{1000};
  /// Where the reconnect jitter is drawn from; empty: a core::system_random() of the
  /// connection's own. A client passes its one source to all its connections.
  core::RandomSource random;
  /// Queued + in flight, counting timed-out commands whose reply has not arrived yet;
  /// beyond it commands fail (overloaded). This bounds the memory a dead node can hold.
  std::size_t max_pending = 4096;
  /// The dead-node bound: the connection is dropped when a command in flight is still
  /// unanswered max(dead_node_min, dead_node_factor x its timeout) after its deadline.
  /// Until then a late reply is only a slow node (or a stalled client), not a dead one.
  std::chrono::milliseconds dead_node_min{1000};
  std::uint32_t dead_node_factor = 10;
  TlsOptions tls;  ///< used for Scheme::rediss
  /// Subscriber connections only: receives each pub/sub push instead of matching it to a
  /// command: ["message", channel, payload], ["smessage", channel, payload] (a shard
  /// channel's), and ["sunsubscribe", channel, count] when a cluster node ends a shard
  /// subscription itself (its slot moved) rather than answering a SUNSUBSCRIBE of that
  /// channel alone. Must not close the connection.
  std::function<void(const redisReply* message)> on_message;
  /// Runs each time the connection becomes ready (after AUTH/SELECT), so a subscriber
  /// can renew its subscriptions after a reconnect; a cluster subscriber's runs for each
  /// shard's connection (net/cluster_router.hpp). May submit commands.
  std::function<void()> on_ready;
  /// Observation hook (redlock::Observer), on the loop thread; must not close the
  /// connection or submit commands. Runs each time the connection (or a connect attempt)
  /// fails, with the error every pending command gets, before they get it.
  std::function<void(std::error_code error, std::string_view detail)> on_failed;
  /// Observation hook, same rules: the node answered NOSCRIPT and the script (named) was
  /// re-sent with EVAL.
  std::function<void(std::string_view script)> on_script_reloaded;
  /// Observation hook, same rules: a command was refused at max_pending, before its
  /// callback gets errc::overloaded with `detail`.
  std::function<void(std::string_view detail)> on_overloaded;
  /// Observation hook, same rules: a Sentinel group's connection became ready on another
  /// master than the one it was last ready on (a failover followed); `master` names it as
  /// where() does.
  std::function<void(std::string_view master)> on_master_changed;
  /// Observation hook, same rules, cluster endpoints only: a shard answered MOVED
  /// (`moved`) or ASK, and the command is sent where it says; `detail` is
  /// "<shard>: MOVED <slot> <host>:<port>".
  std::function<void(bool moved, std::string_view detail)> on_redirected;
  /// Observation hook, same rules, cluster endpoints only: a slot map was read; `shards`
  /// names its masters as where() does.
  std::function<void(std::string_view shards)> on_slot_map;
  /// Observation hook, same rules, cluster endpoints only: every seed refused both slot
  /// map commands (an ACL user without +cluster|shards or +cluster|slots); told once.
  std::function<void(std::string_view why)> on_misconfigured;
  /// Cluster endpoints only (net/cluster_router.hpp): told of each shard master's
  /// connection, with its host:port, when the router makes it (before any command is sent
  /// on it), each time it becomes ready, and when its server stops or starts again owning
  /// slots (ShardEvent). May submit commands on `shard`, which
  /// lives until the router closes.
  std::function<void(Connection& shard, const std::string& address, ShardEvent event)> on_shard;
};

enum class ConnectionState { connecting, ready, backoff, closed };

/// Counters for tests and benchmarks.
struct ConnectionStats {
  std::uint64_t commands = 0;      ///< commands accepted
  std::uint64_t writes = 0;        ///< write calls issued to the socket (one per flush)
  std::uint64_t reads = 0;         ///< read callbacks with data
  std::uint64_t connects = 0;      ///< successful connections (including handshake)
  std::uint64_t disconnects = 0;   ///< connections dropped (error, dead node, peer close)
  std::uint64_t late_replies = 0;  ///< replies discarded because their command timed out
};

/// A Redis Cluster endpoint (Endpoint::is_cluster()) gets a connection per shard master
/// behind this same interface, each command routed to its key's slot's owner
/// (net/cluster_router.hpp).
///
/// Lifetime: created with `Connection::create`, owned through ConnectionPtr whose deleter
/// calls close(). Memory is freed only after every libuv handle's close callback ran.
///
/// Callback contract: every command's callback runs exactly once and never from inside the
/// call that submitted it (a command that fails at once is failed on the next loop turn):
/// with the reply, or an error — errc::timeout when its deadline passed, connection_error
/// when the connection failed or is in backoff after a failure, overloaded when
/// max_pending is reached, cancelled on close(). Callbacks may submit further commands and
/// may call close().
///
/// Pipelining: commands submitted during one loop turn are written with a single write
/// per connection (flushed from a uv_prepare_t before the loop polls).
///
/// Deadlines: a command whose deadline passed fails alone with errc::timeout. Its place in
/// the pipeline is kept, abandoned, so that its reply, when it comes, is matched to it in
/// order and discarded, never taken for a later command's. Expiry is decided only after
/// the loop has read the sockets once more (a uv_check_t after the poll): libuv runs due
/// timers before it polls, so after the loop thread was stalled the replies that arrived
/// meanwhile must be read before anything is declared late.
///
/// Failures: connect errors, a peer close, a protocol error, or a command still unanswered
/// at the dead-node bound (see ConnectionOptions::dead_node_min) drop the connection,
/// fail everything in flight, and reconnect after an exponential backoff with full
/// jitter (reset by a successful handshake). While in backoff, new commands fail at once
/// with the last error; commands submitted while connecting wait (up to their deadline).
///
/// Error codes and details (every detail names the node as host:port or socket path):
///   connection_error  "connect 127.0.0.1:7101: connection refused (ECONNREFUSED)",
///                     "read 127.0.0.1:7101: connection closed by peer (EOF)[ in the middle
///                     of a reply]", "connect 10.0.0.1:6379: timed out after 1000 ms",
///                     "resolve name:6379: ...", and for the other commands in flight when
///                     the node was taken for dead: "<node>: connection dropped: a command
///                     got no reply within 1050 ms" (its timeout plus the dead-node bound).
///                     In backoff: the failure's own code (timeouts count as
///                     connection_error) and "not connected, last error: <detail>".
///   timeout           "<node>: no reply within 50 ms[ (not sent: still connecting)]".
///   protocol_error    "<node>: protocol error: <hiredis reader text>".
///   auth_error        "AUTH on <node> failed: <Redis' text>", or an error reply to a user
///                     command starting NOAUTH / WRONGPASS (detail = Redis' text).
///   redis_error       any other error reply (detail = Redis' text, verbatim; a NOPERM
///                     denial also names what was sent and the node, e.g. "NOPERM ...
///                     (EVALSHA of the acquire script on 127.0.0.1:7101)"), or
///                     "SELECT 99 on <node> failed: ERR DB index is out of range".
///   tls_error         "TLS handshake with <node> failed: certificate verify failed
///                     (...)", "TLS setup for <node> failed: cannot load ca_file ...".
///   overloaded        "<node>: 4096 commands already pending (max_pending)".
///   cancelled         "<node>: connection closed".
/// Callbacks must not throw. The Script passed to eval() must outlive the command (the
/// scripts of lib/scripts are static). create() starts connecting at once, and sets
/// SIGPIPE to SIG_IGN unless the process already chose a disposition for it (libuv
/// writes with write(2), and a vanished peer must be an error, not a fatal signal).
class Connection {
 public:
  static Connection* create(uv_loop_s* loop, ConnectionOptions options);

  /// Fails every pending command with errc::cancelled (synchronously, in order), stops
  /// reconnecting and closes all handles; the object frees itself afterwards. Idempotent.
  void close();

  /// Sends argv (binary-safe). `timeout` counts from now, including time spent queued.
  /// `shared`: the same command for several connections, encoded once (SharedCommand).
  void command(std::span<const std::string_view> argv, std::chrono::milliseconds timeout,
               ReplyCallback callback, SharedCommand* shared = nullptr);

  /// EVALSHA of `script`; on NOSCRIPT, transparently re-sends it as EVAL (same deadline,
  /// same callback), ahead of every command submitted after it that is not written yet.
  void eval(const scripts::Script& script, std::span<const std::string_view> keys,
            std::span<const std::string_view> args, std::chrono::milliseconds timeout,
            ReplyCallback callback, SharedCommand* shared = nullptr);

  const Endpoint& endpoint() const noexcept;
  /// What the connection dials, as its error details name it: host:port or the socket
  /// path; for a Sentinel group the master last named ("master 'mymaster' at
  /// 127.0.0.1:7001 (named by sentinel 127.0.0.1:26379)") or the sentinel being asked.
  const std::string& where() const noexcept;
  ConnectionState state() const noexcept;
  /// Commands queued or in flight, including timed-out ones whose reply is still due.
  std::size_t pending() const noexcept;
  /// Some accepted command is not written to the socket yet and will be once the
  /// connection is ready (it is connecting, resolving a Sentinel group's master, or a
  /// cluster's slot map is not known yet). False while it backs off or is closed: those
  /// commands fail instead.
  bool has_unwritten() const noexcept;
  /// A Sentinel group's: how long the server now dialled has been the group's master as
  /// the sentinel that named it said (SENTINEL MASTER's role-reported-time), plus the time
  /// since. nullopt for other members, when the sentinel did not say, and for a master
  /// dialled on a +switch-master announcement (a failover this client saw).
  std::optional<std::chrono::milliseconds> master_role_age() const noexcept;
  const ConnectionStats& stats() const noexcept;

 private:
  // The state lives in ConnectionImpl (connection.cpp), the only subclass, so that this
  // header needs neither libuv nor hiredis.
  Connection() = default;
  ~Connection() = default;
  friend class ConnectionImpl;
  // A cluster endpoint's connection (net/cluster_router.hpp) routes each command to one
  // of its own connections: the methods above dispatch on this.
  friend class ClusterRouter;
  bool routes_ = false;
};

/// The owner of a Connection (net/closing.hpp): destroying it calls close().
using ConnectionPtr = ClosingPtr<Connection>;

}  // namespace redlock::net

#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include <redlock/observer.hpp>

struct uv_loop_s;

namespace redlock {

class Error;

using std::chrono::milliseconds;

/// How a synchronous call (lock(), unlock(), every method that waits for its answer)
/// reaches the client's loop thread: Options::sync_calls.
enum class SyncCalls {
  /// A call that finds the client idle runs the client's loop on its own thread until its
  /// answer came: no thread handoff. One that finds the loop busy hands its work over
  /// and sleeps until its answer (one wake). The application's callbacks still run on the
  /// client's own thread alone. While a caller runs the loop, the client's I/O runs at
  /// that thread's pace: callers at a low scheduling priority (SCHED_IDLE, a high nice)
  /// on a busy machine would delay the client's other calls and watchdogs until their
  /// answers came, as a starved loop thread would; such a process chooses hand_off.
  lead,
  /// Every call is posted to the loop thread and sleeps until the answer comes back: two
  /// thread switches per call; less memory with many calling threads while a node hangs
  /// (docs/performance.md).
  hand_off,
};

/// TLS settings shared by every `rediss://` node.
struct TlsOptions {
  std::string ca_file;      ///< PEM bundle of trusted CAs; empty = the system store.
  std::string ca_dir;       ///< Directory of hashed CA certificates (c_rehash layout).
  std::string cert_file;    ///< Client certificate (Redis requires one unless tls-auth-clients no).
  std::string key_file;     ///< Private key of the client certificate.
  std::string server_name;  ///< SNI and the name verified; empty = the host of the URL.
  /// Skip certificate and hostname verification. Only for tests; named so it is never
  /// turned on by accident.
  bool insecure_skip_verify = false;
};

/// Members that may have lost keys (docs/safety.md). A member that restarted without
/// its data, or failed over to a replica the writes had not reached, may grant a key that
/// another holder still holds; its grants (and extends) then do not count toward a
/// quorum until `longest_ttl` has passed since it came back, while its refusals still
/// count. A guarded member's grant is released like any other. Each member is asked INFO
/// once per connection (never per lock operation); a server that refuses INFO (an ACL
/// user without +info: docs/security.md) is taken for a restarted one on every reconnect,
/// and so is a server answering INFO on the first connection after one it refused; the
/// refusal is reported once per member (NodeEventKind::misconfigured, a warning). The
/// same INFO tells two members that reach one server (two URLs of one host, such as
/// localhost and 127.0.0.1): while both answer with one run_id, the one that answered it
/// later does not count (its grants, extends included, are uncounted, its detail names
/// the other URL), and the client reports it once (NodeEventKind::misconfigured). With
/// both rules below off no INFO is sent and neither is checked.
struct MemberGuardOptions {
  /// Guard a member whose restart or failover this client observes: its run_id or its
  /// replication id (master_replid) changed across a reconnect. Guarded from the
  /// reconnect for `longest_ttl`. Until a new connection's INFO is answered, the
  /// member's grants do not count either. A Redis Cluster member is watched on each
  /// master that owns slots (connected to as soon as the slot map names it) and is
  /// guarded while any of them is; a master that appears after the client met the
  /// cluster (a replica promoted by a failover, a node given slots) is guarded from its
  /// appearance for `longest_ttl`, whatever its uptime. A master whose INFO has not been
  /// answered holds back its own grants, and the other masters' only until its INFO timed
  /// out (connect_timeout) or its connection failed: one paused master does not take the
  /// member out of every quorum.
  bool observed_restarts = true;
  /// Also guard a member that has been up for less than `longest_ttl` when this client
  /// first meets it, until its start + `longest_ttl`. For a Sentinel group, "up" is the
  /// shorter of its master's uptime and the time the sentinel naming it has known it as
  /// master (SENTINEL MASTER's role-reported-time), so a replica promoted a moment ago is
  /// young however long its process has run; a sentinel restarted less than
  /// `longest_ttl` ago makes its group young too (it cannot tell). Off by default: a client cannot
  /// tell a freshly started fleet from one that lost its keys, and with this on a fleet
  /// just started refuses every lock for `longest_ttl`. Turn it on for short-lived
  /// clients (the CLI run from cron), which never observe a restart themselves.
  bool young_on_first_contact = false;
  /// The longest ttl any client of the fleet uses (lock ttl, extend ttl, the watchdog's
  /// re-armed ttl). 0 (the default): 30 s (LockOptions' default ttl), raised to every
  /// longer ttl this client is asked for; right for a fleet whose clients share their
  /// ttls. Set it when clients differ: then a lock or extend whose ttl exceeds it fails
  /// with errc::invalid_argument naming both.
  milliseconds longest_ttl{0};
  /// R > 0: a grant (of a lock of any kind, an extend, a fencing write-back) counts toward
  /// a quorum only when a WAIT R sent after it on the same connection (pipelined: no round
  /// trip of its own; one at a time per connection, shared by the grants written while it
  /// waits) reports that at least R of the member's replicas acknowledged it within three
  /// quarters of the time left to its deadline; otherwise that member's outcome says
  /// "not counted: WAIT R acknowledged by N replica(s)". A failover to a replica that
  /// acknowledged then keeps the grant. A member whose replication identity changed is
  /// guarded all the same (docs/safety.md says why). 0 (the default): no WAIT. In [0, 1000].
  /// Refused (std::invalid_argument) on a client with a Redis Cluster member, whose WAIT
  /// would not follow each write to the shard that took it.
  int replicas_to_ack = 0;
  /// A Sentinel group may have two masters at once after a failover: the old one stays a
  /// master until the sentinels demote it, and for as long as it is cut off from them but
  /// not from some clients. The group then grants one key twice, one client on each
  /// master, and two majorities of N may share that one member (docs/safety.md,
  /// "Sentinel groups"). So create() refuses Sentinel group members
  /// (std::invalid_argument) unless replicas_to_ack > 0 (set it to the number of
  /// replicas of each group: the old master then has one too few once a replica is
  /// promoted), or 2 x quorum >= N + 2 (two quorums share two members), or this is set:
  /// the servers refuse writes without a replica (min-replicas-to-write), or the fleet
  /// takes the risk knowingly. A Redis Cluster's master cut off from most masters stops
  /// taking writes after cluster-node-timeout, before a replica may replace it.
  bool allow_two_masters = false;
};

/// Options of a Client. A plain struct: every field has a documented default, and
/// Client::create() validates the whole set, throwing std::invalid_argument with a
/// message that names the offending field or URL.
struct Options {
  /// The independent Redis masters, as URLs:
  ///   redis://[[user]:password@]host:port[/db]   plain TCP (host may be a name or [v6])
  ///   rediss://...                               TLS, configured by `tls`
  ///   unix:///path/to/redis.sock[?db=N]          unix domain socket
  ///   redis-sentinel://[[user]:password@]host[:port],host[:port].../name[/db]
  ///                                              a Sentinel group: the master that its
  ///                                              sentinels name `name` (port 26379 by
  ///                                              default; credentials and db are the
  ///                                              master's, the sentinels' are
  ///                                              sentinel_username/sentinel_password)
  ///   rediss-sentinel://...                      the same over TLS (sentinels and master)
  ///   redis-cluster://[[user]:password@]host[:port],host[:port]...
  ///                                              a Redis Cluster: each key on the master
  ///                                              of its slot (seeds' port 6379 by
  ///                                              default; credentials for every server;
  ///                                              db 0 only)
  ///   rediss-cluster://...                       the same over TLS to every server
  /// A Sentinel group is one member (one vote). Each connection to it first asks the
  /// sentinels in turn (SENTINEL GET-MASTER-ADDR-BY-NAME), then checks with ROLE that the
  /// server named is a master before sending it anything; it asks again after every
  /// connection loss and after a READONLY or MASTERDOWN reply, so it follows failovers
  /// (paced by the reconnect backoff below). Two Sentinel URLs with the same name and the
  /// same set of sentinels are one member (rejected as a duplicate).
  /// A Redis Cluster is one member (one vote per key): the client learns the slot map
  /// from the seeds, in turn (CLUSTER SHARDS, or CLUSTER SLOTS), sends each command to its
  /// key's slot's master, and follows MOVED (the map corrected, the command sent once
  /// more) and ASK (ASKING and the command, once). Lock keys must be placeable in one
  /// slot with their fencing counter (no '}' in a key without a hash tag); calls that
  /// break this fail with errc::invalid_argument. A key set spread over slots is taken
  /// with one script per slot, and each cluster member grants it all or none. Two
  /// cluster URLs with the same set of seeds are one member (rejected as a duplicate).
  std::vector<std::string> nodes;

  /// Nodes that must agree. 0 = a majority (N/2+1). Allowed: [N/2+1, N].
  int quorum = 0;

  /// Per-node deadline of one command, counted from when its member's connection is up.
  /// 0 = min(50 ms, ttl / 10) for each operation. A command sent while the client makes
  /// its first connection to a member (a new client's first calls) also waits for that
  /// connection, up to connect_timeout: connecting, TLS, AUTH, a Sentinel group's master
  /// look-up and a cluster's first slot map are not the node's round trip. A round
  /// decided by the other members does not wait for it (a silent member delays no lock
  /// the others can grant); status(), inspect() and Election::leader(), which wait for
  /// every member, may wait that long on a new client. Later reconnects fail fast:
  /// commands meet a member in backoff with its last error at once.
  milliseconds node_timeout{0};
  /// Deadline to establish a connection (TCP/unix connect + TLS + AUTH/SELECT; for a
  /// cluster, also the first slot map).
  milliseconds connect_timeout{1000};

  ///@{
  /// Clock-drift allowance: validity = ttl - elapsed - (ttl * drift_factor + drift_margin).
  double drift_factor = 0.01;
  milliseconds drift_margin{2};
  ///@}

  ///@{
  /// Delay between attempts of lock() while waiting: retry_delay +/- uniform jitter. A
  /// waiter tries sooner when it learns the key is or will be free (a release announced,
  /// the entries that refused a split vote expiring so as to leave a quorum free), and
  /// after a split vote, within a round trip plus a span of node_timeout / 4 doubling per
  /// split (README). Attempts that find no quorum reachable wait instead from retry_delay,
  /// doubling per attempt, up to a second (half of it at random), whatever wakes come.
  /// The same schedule for every kind of lock.
  milliseconds retry_delay{100};
  milliseconds retry_jitter{50};
  ///@}

  ///@{
  /// Reconnect backoff after a failure: doubles from min to max, with full jitter.
  milliseconds reconnect_min{10};
  milliseconds reconnect_max{1000};
  ///@}

  /// Commands that may be queued or in flight on one node; beyond this a command fails at
  /// once (errc::overloaded) so a hung node cannot grow memory without bound.
  std::size_t max_pending_per_node = 4096;

  /// Longest resource name accepted (bytes). Redis allows 512 MB keys; a lock name that
  /// long is a bug, and every byte is sent to N nodes on every operation.
  std::size_t max_key_bytes = 64 * 1024;

  ///@{
  /// Defaults for nodes whose URL carries no credentials (ACL user, password).
  std::string username;
  std::string password;
  ///@}

  ///@{
  /// Credentials for the sentinels of every redis-sentinel:// node (the URL's own
  /// credentials are the master's). Empty password: no AUTH to the sentinels.
  std::string sentinel_username;
  std::string sentinel_password;
  ///@}

  /// TLS settings for rediss:// nodes, rediss-sentinel:// groups and rediss-cluster://
  /// clusters (CA, client certificate, server name). One set for every server of a
  /// member: the sentinels, the master they name, each shard master. Each certificate is
  /// verified against the host the server is reached at (server_name when set): the URL's
  /// for a sentinel, the one the sentinels name for a master, the one the cluster names
  /// (CLUSTER SHARDS, MOVED, ASK) for a shard, whose TLS port the slot map takes
  /// ("tls-port"; a TLS-only server's only port). Tested against real TLS-only groups
  /// and clusters with verification on: locks, extend, release, a MOVED, a Sentinel
  /// failover and a shard failover followed, an untrusted CA and a plain-text URL refused
  /// (docs/security.md lists what is not tested).
  TlsOptions tls;

  /// Members that may have lost keys: see MemberGuardOptions.
  MemberGuardOptions member_guard;

  /// Run on the caller's libuv loop instead of an own loop thread. The caller runs the
  /// loop; the thread that runs it is the client's loop thread, recognised from the loop's
  /// first iteration after Client::create() (call create() before running the loop, or
  /// from one of its callbacks). The synchronous methods may then only be called from
  /// other threads (on the loop thread they return errc::invalid_argument). Shutdown:
  /// close() and ~Client never wait for the loop, which may not be running; they begin the
  /// shutdown, which completes on the loop's next turns (pending callbacks run with
  /// errc::cancelled, every handle of the client closes), after which uv_run() returns
  /// by itself and uv_loop_close() succeeds. Keep running the loop until then.
  uv_loop_s* loop = nullptr;

  /// How synchronous calls reach the loop (SyncCalls). They always hand off with `loop`
  /// and when a Lock's destructor releases it (a wait bounded in time). An `observer` or
  /// a `log` changes nothing here: the events a caller hears while it runs the loop are
  /// told on the client's own thread before the call returns (Observer).
  SyncCalls sync_calls = SyncCalls::lead;

  /// Told about every acquire attempt, wake, extend, release, watchdog round and node
  /// connection event, on the loop thread (see Observer: it must not block). Null: no
  /// event is built.
  std::shared_ptr<Observer> observer;
  /// Log lines for operators (nodes down and back with the cause, watchdog failures, a
  /// lost lock; at debug every attempt), at `log_level` and above. Null (the default):
  /// the library writes no log at all.
  LogSink log;
  /// The lowest level `log` receives.
  LogLevel log_level = LogLevel::info;
};

/// Options of one lock acquisition. Every field means the same for every kind of lock
/// (lock, try_lock, read_lock, write_lock, acquire_permit, lock_all, their *_async forms
/// and the Asio operations): they share one acquisition (docs/control.md).
struct LockOptions {
  /// Time to live of the lock on each node. Must be > 0, > 2 x node_timeout and at most a
  /// year (a longer one is almost certainly a unit mistake).
  milliseconds ttl{30'000};
  /// How long an acquisition may keep trying while the lock is held by another or no
  /// quorum is reachable (unless fail_fast). 0 = one attempt; milliseconds::max() = until
  /// acquired, stopped or the client closes. Attempts that find no quorum reachable back
  /// off from the client's retry_delay, doubling, to a second.
  milliseconds wait{0};
  /// Attempts in total while waiting, the first included. 0 = no limit but `wait`.
  int max_attempts = 0;
  /// Return a fencing token that is greater than every earlier holder's (costs one more
  /// round trip).
  bool fencing = false;
  /// Keep the lock extended until unlock(): a watchdog extends it to its TTL (the last one
  /// a quorum confirmed, so Lock::extend() to another TTL is what it keeps) every
  /// extend_every, and earlier when the validity requires: each round starts while a
  /// failed round and one retry still fit before the validity ends. When no extension can
  /// keep a quorum, the lock is marked lost and on_lost runs while validity is left.
  /// Requires a ttl that leaves room for that after the slowest acquisition:
  /// ttl - drift > (1 or, with fencing, 2) x node_timeout + node_timeout + max(2 ms,
  /// node_timeout / 10); otherwise lock() returns errc::invalid_argument naming ttl and
  /// node_timeout. Client::close() stops the watchdogs without calling on_lost: a lock
  /// still held then expires by its TTL.
  bool auto_extend = false;
  /// Longest interval between extensions. 0 = a third of the lock's current TTL.
  milliseconds extend_every{0};
  /// Called on the client's loop thread when the watchdog loses the lock, before its
  /// validity ends (unless the loop thread itself was stalled past it), or when it
  /// reaches max_hold or max_extensions (the error's code is then
  /// errc::hold_limit_reached instead of errc::lock_lost). Must not block. Only with
  /// auto_extend (otherwise lock() returns errc::invalid_argument). An exception it
  /// throws is caught and reported on stderr.
  std::function<void(const Error&)> on_lost{};  // {}: designated initializers stay -Wextra clean

  /// Cancels the acquisition: once a stop is requested (from any thread), an acquisition
  /// of any kind, sync or async, ends with errc::cancelled within a loop turn, whether waiting
  /// between attempts or with an attempt on the wire; whatever that attempt got is released on
  /// every node, and the waiter leaves the client's queue for the key (a wake it held
  /// passes to the next waiter). A stop requested before the call makes no attempt.
  /// No effect once the lock is acquired. The default token never stops.
  std::stop_token stop{};
  /// Give up at the first attempt that finds a quorum unreachable (more than N - quorum
  /// nodes down, slow or erroring) with errc::quorum_unreachable, instead of retrying
  /// until `wait` ends. Conflicts (another holder, also with a minority of nodes down)
  /// are still waited out.
  bool fail_fast = false;
  /// auto_extend only: the watchdog never extends the validity past acquisition +
  /// max_hold. At the first tick whose extension would, it stops extending, marks the
  /// lock lost and calls on_lost with errc::hold_limit_reached; the validity already
  /// granted is left to run out (the key is not deleted until unlock()), so the owner
  /// can stop safely. 0 = no limit.
  milliseconds max_hold{0};
  /// auto_extend only: at most this many extensions by the watchdog; the tick after the
  /// last ends the lock like max_hold does. 0 = no limit.
  int max_extensions = 0;
};

}  // namespace redlock

#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

struct uv_loop_s;

namespace redlock {

class Error;

using std::chrono::milliseconds;

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

/// Options of a Client. A plain struct: every field has a documented default, and
/// Client::create() validates the whole set, throwing std::invalid_argument with a
/// message that names the offending field or URL.
struct Options {
  /// The independent Redis masters, as URLs:
  ///   redis://[[user]:password@]host:port[/db]   plain TCP (host may be a name or [v6])
  ///   rediss://...                               TLS, configured by `tls`
  ///   unix:///path/to/redis.sock[?db=N]          unix domain socket
  std::vector<std::string> nodes;

  /// Nodes that must agree. 0 = a majority (N/2+1). Allowed: [N/2+1, N].
  int quorum = 0;

  /// Per-node deadline of one command. 0 = min(50 ms, ttl / 10) for each operation.
  milliseconds node_timeout{0};
  /// Deadline to establish a connection (TCP/unix connect + TLS + AUTH/SELECT).
  milliseconds connect_timeout{1000};

  /// Clock-drift allowance: validity = ttl - elapsed - (ttl * drift_factor + drift_margin).
  double drift_factor = 0.01;
  milliseconds drift_margin{2};

  /// Delay between attempts of lock() while waiting: retry_delay +/- uniform jitter.
  milliseconds retry_delay{100};
  milliseconds retry_jitter{50};

  /// Reconnect backoff after a failure: doubles from min to max, with full jitter.
  milliseconds reconnect_min{10};
  milliseconds reconnect_max{1000};

  /// Commands that may be queued or in flight on one node; beyond this a command fails at
  /// once (errc::overloaded) so a hung node cannot grow memory without bound.
  std::size_t max_pending_per_node = 4096;

  /// Longest resource name accepted (bytes). Redis allows 512 MB keys; a lock name that
  /// long is a bug, and every byte is sent to N nodes on every operation.
  std::size_t max_key_bytes = 64 * 1024;

  /// Defaults for nodes whose URL carries no credentials (ACL user, password).
  std::string username;
  std::string password;

  TlsOptions tls;

  /// Run on the caller's libuv loop instead of an own loop thread. The caller must run
  /// the loop; the synchronous methods may then only be called from other threads.
  uv_loop_s* loop = nullptr;
};

/// Options of one lock acquisition.
struct LockOptions {
  /// Time to live of the lock on each node. Must be > 0 and > 2 x node_timeout.
  milliseconds ttl{30'000};
  /// How long lock() may keep trying while the lock is held by another. 0 = one attempt.
  milliseconds wait{0};
  /// Attempts in total while waiting, the first included. 0 = no limit but `wait`.
  int max_attempts = 0;
  /// Return a fencing token that is greater than every earlier holder's (costs one more
  /// round trip).
  bool fencing = false;
  /// Keep the lock extended (every extend_every) until unlock(); on a failed extension the
  /// lock is marked lost and on_lost runs.
  bool auto_extend = false;
  /// Interval of auto-extension. 0 = ttl / 3.
  milliseconds extend_every{0};
  /// Called on the client's loop thread when the watchdog loses the lock, before its
  /// validity ends. Must not block.
  std::function<void(const Error&)> on_lost;
};

}  // namespace redlock

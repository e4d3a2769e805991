#pragma once
// Real redis-server processes on free loopback ports, each in its own directory: the one
// server class behind the kit's Sentinel groups and clusters and the project's own tests.
// Never a mock Redis: the tests exercise the real protocol, real scripts and real process
// faults (SIGSTOP, SIGKILL, restart). The binaries are redis_server_binary() and
// redis_cli_binary() (redlock/testing/redis_binary.hpp).
//
// A missing redis-server binary is a test failure (an exception), never a skip.
//
// Thread-safety: one RedisServer may be driven from several threads (command() is
// serialised internally), but starting, stopping and restarting must not race with
// each other. The server is killed (PR_SET_PDEATHSIG) when the thread that started it
// exits, so that a crashed test never leaves servers behind: start and restart servers
// from a thread that outlives them, normally the test's main thread.

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

struct redisContext;
struct timeval;

namespace redlock::testing::detail {

/// A reply copied out of hiredis, so it outlives the connection.
struct Reply {
  int type = 0;  ///< hiredis REDIS_REPLY_* value
  long long integer = 0;
  std::string str;  ///< string, status or error text
  std::vector<Reply> elements;

  bool is_nil() const;
  bool is_error() const;
  bool is_status(const std::string& text) const;  ///< e.g. is_status("OK")
};

/// Whether a TLS server demands a client certificate (redis' tls-auth-clients).
enum class TlsClientAuth { required, optional, none };

/// A throw-away PKI for TLS tests, made with the openssl CLI the first time it is asked
/// for, once per process, in a temporary directory that is removed at exit. The server
/// certificate is valid for localhost, 127.0.0.1 and ::1 (and nothing else); all keys are
/// P-256. Throws std::runtime_error with openssl's output when openssl is missing or
/// fails. Thread-safe.
struct TestCertificates {
  std::string dir;
  std::string ca_cert;  ///< signed the server and the client certificate
  std::string server_cert;
  std::string server_key;
  std::string client_cert;  ///< extendedKeyUsage clientAuth, CN redlock-test-client
  std::string client_key;
  std::string other_ca_cert;  ///< a CA that signed neither: trusting only it must fail
};
const TestCertificates& test_certificates();

struct RedisServerOptions {
  /// Its directory, created here and removed with the server; empty: a temporary one.
  std::string dir;
  /// --appendonly yes --appendfsync always (else --save '' --appendonly no).
  bool appendonly_always = false;
  /// requirepass; command() authenticates with it.
  std::string password;
  /// Appended to the redis-server command line, e.g. {"--maxmemory", "1mb"}.
  std::vector<std::string> extra_args;
  /// Added to the server's environment ("NAME=value"), e.g. a preload.
  std::vector<std::string> environment;
  /// Also listen on a unix socket in the server's directory (see unix_path()).
  bool unix_socket = false;
  /// Serve TLS on port(), with the certificates of test_certificates(); url() becomes
  /// rediss://. The server then also listens in plain text on plain_port(): command() and
  /// the start-up check use that port, so the fixture's own channel stays plain RESP over
  /// hiredis and works whatever the TLS settings under test are. The server's own
  /// outgoing TLS connections (replication, cluster bus, sentinel) present the client
  /// certificate.
  bool tls = false;
  /// tls with no plain-text port at all (port 0), as a TLS-only deployment runs. The
  /// fixture's own channel then is a unix socket in the server's directory (unix_path()),
  /// and plain_port() is 0.
  bool tls_only = false;
  TlsClientAuth tls_client_auth = TlsClientAuth::required;
  /// Non-empty: run a sentinel instead (redis-server <dir>/sentinel.conf --sentinel), with
  /// this text as its configuration file, which the sentinel rewrites as it learns.
  std::string sentinel_config;
  /// Run as a Redis Cluster node (--cluster-enabled yes), with its cluster bus on a free
  /// port of its own (cluster_bus_port()): the default, port + 10000, may be taken or
  /// beyond 65535.
  bool cluster = false;
  /// Non-empty: the server runs in this network namespace (a file, /run/netns/NAME), on
  /// `port` of every address there (`bind` 0.0.0.0 then covers only the namespace's own).
  /// The fixture's own channel is then a unix socket in the server's directory
  /// (unix_path()), which reaches it whatever its links do.
  std::string network_namespace;
  /// What it listens on.
  std::string bind = "127.0.0.1";
  /// Its port; 0: a free loopback port. Kept across restart().
  std::uint16_t port = 0;
};

/// One real redis-server child process.
class RedisServer {
 public:
  /// Picks a free loopback port, creates a temporary directory, starts the server and
  /// waits until it answers PING. Throws std::runtime_error, with the tail of the
  /// server's log, when it does not come up.
  explicit RedisServer(RedisServerOptions options = {});
  /// SIGCONT if paused, SIGKILL, reap, remove the directory.
  ~RedisServer();

  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  /// The port that clients under test use: TLS when options.tls, else plain.
  std::uint16_t port() const { return port_; }
  /// The plain-text port: port() unless options.tls, then a second port of the server;
  /// 0 with options.tls_only.
  std::uint16_t plain_port() const { return plain_port_; }
  /// The cluster bus port when options.cluster; 0 otherwise.
  std::uint16_t cluster_bus_port() const { return bus_port_; }
  /// "redis://127.0.0.1:<port>" ("rediss://" when options.tls), without credentials.
  std::string url() const;
  /// url() with the password ("redis://:<password>@127.0.0.1:<port>"), or url() when the
  /// server has none.
  std::string url_with_password() const;
  /// Path of the unix socket; "" unless options.unix_socket, options.tls_only or
  /// options.network_namespace.
  std::string unix_path() const;
  /// "unix://<unix_path()>"; "" when unix_path() is.
  std::string unix_url() const;

  /// Pid of the current process; -1 after kill9() until restart().
  pid_t pid() const { return pid_; }
  bool paused() const { return paused_; }
  /// False after kill9(), or when the process exited on its own (reaped here).
  bool running() const;

  /// SIGSTOP: the server keeps its sockets but answers nothing (a "slow" node).
  void pause();
  /// SIGCONT.
  void resume();
  /// SIGKILL and reap. The directory (and any AOF in it) is kept for restart().
  void kill9();
  /// Starts the server again on the same port with the same options and directory, and
  /// waits for PING. A server that is still running is killed first.
  void restart();

  /// Runs one command over a blocking hiredis connection of the test side (2 s timeout,
  /// to plain_port()), authenticating with the password first. Throws std::runtime_error
  /// on an I/O error or timeout (the connection is then dropped and re-opened by the next
  /// call; to unix_path() with options.tls_only). Error replies are returned, not thrown.
  Reply command(std::vector<std::string> argv);

  /// The server's working directory (log: dir() + "/redis.log").
  const std::string& dir() const { return dir_; }
  /// The last `lines` lines of the server's log, for failure messages.
  std::string log_tail(std::size_t lines = 20) const;
  const RedisServerOptions& options() const { return options_; }

 private:
  void spawn();
  bool wait_ready(std::string& why);
  void reap_blocking();
  void drop_client();
  std::vector<std::string> command_line() const;
  /// A blocking hiredis connection on the fixture's own channel (see command()).
  redisContext* connect_channel(timeval timeout) const;
  /// Whether that channel is the unix socket (tls_only, or in a network namespace).
  bool channel_is_unix() const;

  RedisServerOptions options_;
  std::string binary_;
  std::string dir_;
  std::uint16_t port_ = 0;
  std::uint16_t plain_port_ = 0;
  std::uint16_t bus_port_ = 0;
  pid_t pid_ = -1;
  bool paused_ = false;
  mutable bool exited_ = false;

  std::mutex client_mutex_;
  redisContext* client_ = nullptr;
};

/// N independent servers (a Redlock deployment of N masters).
class RedisCluster {
 public:
  explicit RedisCluster(std::size_t n = 5, RedisServerOptions options = {});

  RedisServer& operator[](std::size_t i) { return *servers_.at(i); }
  std::size_t size() const { return servers_.size(); }
  /// Every server's url() (with the password when one is set), in index order.
  std::vector<std::string> urls() const;

  /// Heals after a test that paused or killed nodes: resumes paused servers and restarts
  /// dead ones.
  void resume_all_and_restart_dead();
  /// FLUSHALL on every running, unpaused server.
  void flushall();

 private:
  std::vector<std::unique_ptr<RedisServer>> servers_;
};

/// One command to the plain RESP port `port` on 127.0.0.1, over a connection of its own
/// (2 s timeout), for a server that is not a RedisServer (a standalone Fleet member).
/// Throws std::runtime_error on an I/O error or timeout; error replies are returned.
Reply command_at(std::uint16_t port, const std::vector<std::string>& argv);

}  // namespace redlock::testing::detail

#pragma once
/// @file
/// One member of a Fleet: a redis-server process, and the fault proxy in front of it.

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace redlock::testing {

/// How Member::restart() brings a member back.
struct RestartOptions {
  /// True: the member comes back with what its append-only file holds (every write
  /// acknowledged before the kill: appendfsync always), which needs
  /// FleetOptions::persistence. False: its data is deleted first and it comes back empty,
  /// as a node without persistence does after a crash.
  bool persistence = false;
};

/// A redis-server child process on a loopback port of its own, in a directory of its own,
/// made by a Fleet and stopped by it. Every fault verb returns once the fault is in effect:
/// a request sent after it sees the fault. Verbs are not thread-safe: drive one member from
/// one thread at a time (clients under test may of course talk to it from any thread).
class Member {
 public:
  /// @cond INTERNAL
  // Made by Fleet only; Impl is the library's own.
  struct Impl;
  explicit Member(std::unique_ptr<Impl> impl);
  /// @endcond
  /// Kills the process (SIGKILL, after SIGCONT when paused) and closes the proxy.
  ~Member();
  Member(const Member&) = delete;
  Member& operator=(const Member&) = delete;

  /// Its index in the Fleet.
  std::size_t index() const;
  /// The URL clients use: the proxy's ("redis://127.0.0.1:<proxy_port()>") when the fleet
  /// has proxies, else direct_url().
  std::string url() const;
  /// "redis://127.0.0.1:<port()>": the server itself, past any proxy.
  std::string direct_url() const;
  /// The server's port; it keeps it across restart().
  std::uint16_t port() const;
  /// The proxy's port; 0 when the fleet has no proxies.
  std::uint16_t proxy_port() const;
  /// Its directory (redis.log, the append-only file).
  std::string dir() const;
  /// The last `lines` lines of its log, for a test's failure message.
  std::string log_tail(std::size_t lines = 20) const;

  /// The server's pid; -1 after kill() until restart().
  pid_t pid() const;
  /// False after kill(), or when the process died on its own.
  bool running() const;
  /// Between pause() and resume().
  bool paused() const;

  /// SIGSTOP, returning once the process is stopped: it keeps its connections and its
  /// keys but answers nothing, like a node in a long GC pause or a frozen VM.
  void pause();
  /// SIGCONT, returning once the process runs again; it answers what was sent meanwhile.
  void resume();
  /// SIGKILL, returning once the process is gone; its port refuses connections (through
  /// the proxy: connections are accepted, then closed). Its directory is kept for restart().
  void kill();
  /// Starts the server again on the same port (killing it first when it runs) and returns
  /// once it answers PING with its data loaded. Throws std::invalid_argument for
  /// `{.persistence = true}` in a fleet without persistence, std::runtime_error (with the
  /// log's tail) when it does not come up.
  void restart(RestartOptions options = {});

  /// Partitions the member: its proxy accepts connections but carries no byte either way
  /// (bytes in flight are lost), so clients time out rather than get an error. Throws
  /// std::logic_error in a fleet without proxies, as do heal(), slow() and
  /// reset_connections().
  void cut();
  /// Undoes cut() and slow(): bytes flow again without added delay. Connections that lost
  /// bytes to the cut are reset, as a real connection would die of its lost segments.
  void heal();
  /// Delays every reply of the member by `delay` (requests reach the server at once, so
  /// a command takes effect before the client hears of it); 0 removes the delay.
  void slow(std::chrono::milliseconds delay);
  /// Closes every client connection through the proxy with an RST; new connections are
  /// accepted as before.
  void reset_connections();

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace redlock::testing

#pragma once
/// @file
/// A set of independent Redis masters for tests: what redlock::Options::nodes lists.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <redlock/testing/member.hpp>

namespace redlock::testing {

/// What a Fleet starts.
struct FleetOptions {
  /// Independent masters (a Redlock deployment of N nodes): 5 by default.
  std::size_t masters = 5;
  /// Append-only file with appendfsync always, so that a member restarted with
  /// `{.persistence = true}` keeps every write it acknowledged. Off: no AOF, no RDB.
  bool persistence = false;
  /// A fault proxy in front of each member (needed by cut(), heal(), slow()); urls()
  /// then name the proxies. Off: urls() name the servers themselves.
  bool proxies = true;
  /// Appended to every redis-server command line, e.g. {"--maxmemory", "10mb"}.
  std::vector<std::string> extra_args{};
};

/// Real redis-server processes on free loopback ports, each in a directory of its own
/// under one temporary directory. The constructor returns once every member answers PING;
/// the destructor kills them and removes the directory, also when a test throws.
/// A missing redis-server is an exception (see redis_server_binary()), never a skip.
///
/// The servers die with the thread that started them (PR_SET_PDEATHSIG), so that a test
/// that crashes leaves none behind: make the fleet, and restart members, on a thread that
/// outlives them, normally the test's main thread.
class Fleet {
 public:
  /// Starts the members. Throws std::runtime_error, naming the member and with the tail
  /// of its log, when one does not come up; those already started are stopped again.
  explicit Fleet(FleetOptions options = {});
  /// Kills every member and removes the temporary directory.
  ~Fleet();
  Fleet(const Fleet&) = delete;
  Fleet& operator=(const Fleet&) = delete;

  /// Member `i` (std::out_of_range past size()).
  Member& operator[](std::size_t i);
  /// Member `i` (std::out_of_range past size()).
  const Member& operator[](std::size_t i) const;
  /// How many members.
  std::size_t size() const;
  /// Every member's url(), in index order: hand them to redlock::Options::nodes.
  std::vector<std::string> urls() const;
  /// Undoes every fault: resumes paused members, restarts dead ones (with their data when
  /// the fleet has persistence), heals the proxies. For a fixture shared by many tests.
  void heal_all();
  /// The temporary directory that holds every member's.
  const std::string& dir() const;
  /// The options it was made with.
  const FleetOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace redlock::testing

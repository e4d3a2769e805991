#pragma once
// A side channel to one node, apart from the client under test: INFO for the server's
// CPU time, command and read counters, its pid for fault injection, and cleanup of the
// run's keys. A plain blocking hiredis connection; never used inside the window.

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct redisContext;

namespace redlock_bench {

/// Cumulative counters of one node (INFO cpu and INFO stats).
struct NodeCounters {
  double cpu_us = 0;       ///< used_cpu_user + used_cpu_sys, microseconds
  double commands = 0;     ///< total_commands_processed
  double reads = 0;        ///< total_reads_processed: read(2) calls, i.e. batches received
  double connections = 0;  ///< total_connections_received
};

class RedisAdmin {
 public:
  /// Connects to `url` (redis://[[user]:password@]host:port or unix:///path). Throws
  /// std::runtime_error when the node does not answer within two seconds.
  explicit RedisAdmin(const std::string& url);
  ~RedisAdmin();
  RedisAdmin(const RedisAdmin&) = delete;
  RedisAdmin& operator=(const RedisAdmin&) = delete;

  /// The fields of `INFO <section>` as name -> value.
  std::map<std::string, std::string> info(const std::string& section);
  NodeCounters counters();
  /// The server's own pid (INFO server process_id).
  pid_t pid();
  /// Deletes `keys`; errors are ignored (cleanup only).
  void del(const std::vector<std::string>& keys);

 private:
  std::string url_;
  redisContext* context_ = nullptr;
};

/// Sum of the counters of admins[first..]; a node that fails to answer makes the sum
/// empty.
std::optional<NodeCounters> sum_counters(std::vector<std::unique_ptr<RedisAdmin>>& admins,
                                         std::size_t first = 0);

}  // namespace redlock_bench

#pragma once
// Who a Redis server says it is, read from its INFO reply: what tells a restarted or
// failed-over server from the one met before (core/member_life.hpp).

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace redlock::core {

/// What INFO says of a server's identity.
struct ServerIdentity {
  std::string run_id;
  std::chrono::seconds uptime{0};
  std::string master_replid;
  std::string master_replid2;
  /// Not from INFO: for a Sentinel group, how long the server has been the group's master
  /// as the sentinel that named it says (net::Connection::master_role_age). A replica
  /// promoted a second ago may have been up for days.
  std::optional<std::chrono::milliseconds> master_for;
};

/// Reads run_id, uptime_in_seconds, master_replid and master_replid2 out of an INFO reply;
/// nullopt when run_id or uptime_in_seconds is missing.
std::optional<ServerIdentity> parse_server_identity(std::string_view info);

}  // namespace redlock::core

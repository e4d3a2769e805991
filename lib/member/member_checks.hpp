#pragma once
// What each kind of member a URL names (one server, a Sentinel group, a Redis Cluster)
// asks of the client's options and of a lock's keys, beyond what every member asks
// (core/validation.hpp): so that the client checks them without knowing the kinds.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <redlock/options.hpp>

#include "net/endpoint.hpp"

namespace redlock::detail {

/// Two URLs that reach the same member are one, however spelled: "host:port" with the
/// host in lower case, "unix:<path>", a Sentinel group by its master's name and its
/// sentinels, a cluster by its seeds (each set sorted). core::check_options refuses two
/// members with one identity.
std::string member_identity(const net::Endpoint& endpoint);

/// Why `options` cannot hold locks on the members `endpoints` name, for a reason of one
/// kind of member, as the message of an invalid_argument; nullopt when none. `quorum` is
/// the effective one.
std::optional<std::string> member_kind_problem(const std::vector<net::Endpoint>& endpoints,
                                               const Options& options, int quorum);

/// Where a lock's key must be placeable on every member: a cluster member keeps the names
/// beside a key (its fencing counter, its release channel) in the key's slot, which a key
/// without a hash tag that holds a '}' does not allow.
class KeyPlacement {
 public:
  KeyPlacement() = default;
  explicit KeyPlacement(const std::vector<net::Endpoint>& endpoints);
  /// Why `key` cannot be placed on these members, to follow the key in a message
  /// ("cannot be placed on cluster member <URL>: ..."); nullopt when it can.
  std::optional<std::string> problem(std::string_view key) const;

 private:
  // The first member that needs a key's companions beside it; empty: none does.
  std::string strict_member_;
};

}  // namespace redlock::detail

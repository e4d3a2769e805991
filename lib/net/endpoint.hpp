#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <redlock/result.hpp>

namespace redlock::net {

enum class Scheme { redis, rediss, unix_socket };

/// One sentinel of a Sentinel group, or one seed of a cluster.
struct SentinelAddress {
  std::string host;  ///< Without brackets for IPv6 literals.
  std::uint16_t port = 26379;
};

/// A parsed node URL.
struct Endpoint {
  Scheme scheme = Scheme::redis;
  std::string host;  ///< Without brackets for IPv6 literals. Empty for unix.
  std::uint16_t port = 6379;
  std::string path;  ///< unix socket path.
  int db = 0;
  std::string username;  ///< ACL user; empty = "default" (AUTH with the password only).
  std::string password;  ///< Empty = no AUTH.
  std::string display;   ///< The URL with the password replaced by "***": safe to log.
  /// A Sentinel group (redis-sentinel://, rediss-sentinel://): the sentinels to ask, in
  /// the URL's order. Empty for a standalone master. host and port are then unset: the
  /// master is whatever the sentinels name (net/sentinel_resolution.hpp); scheme, db,
  /// username and password are the master's.
  std::vector<SentinelAddress> sentinels;
  std::string master_name;        ///< The group's name, as the sentinels monitor it.
  std::string sentinel_username;  ///< ACL user for the sentinels; empty = "default".
  std::string sentinel_password;  ///< Empty = no AUTH to the sentinels.

  /// A Redis Cluster (redis-cluster://, rediss-cluster://): the servers first asked for
  /// the slot map, in the URL's order. Empty otherwise. host and port are then unset: each
  /// key's server is its slot's owner (net/cluster_router.hpp); scheme, username and
  /// password hold for every server of the cluster; db is 0.
  std::vector<SentinelAddress> cluster_seeds;

  bool is_sentinel_group() const noexcept { return !sentinels.empty(); }
  bool is_cluster() const noexcept { return !cluster_seeds.empty(); }
};

/// Parses redis://[[user]:password@]host[:port][/db], rediss://..., unix:///path[?db=N]
/// (percent-escapes allowed in user and password). On failure: errc::invalid_argument with
/// a message naming the URL (password masked) and what is wrong with it.
///
/// Also accepted: unix://[[user]:password@]/path[?db=N]; a scheme in any case; a raw '@'
/// or '/' in a password (credentials end at the last '@'); "[v6%25zone]". Rejected: a
/// user without a password, credentials without ':', ports outside 1-65535, anything
/// after the db. Message format: invalid node URL "<masked URL>": <what is wrong>.
///
/// A Sentinel group: redis-sentinel://[[user]:password@]host[:port],host[:port].../name[/db]
/// (rediss-sentinel:// for TLS to the sentinels and the master). The credentials are the
/// master's; a sentinel's port defaults to 26379; name is percent-decoded and must be
/// non-empty. The same host:port twice is rejected.
///
/// A Redis Cluster: redis-cluster://[[user]:password@]host[:port],host[:port]...
/// (rediss-cluster:// for TLS to every server): seeds to learn the slot map from, port
/// 6379 by default; the credentials hold for every server. No db or path: a cluster
/// serves db 0 only. The same host:port twice is rejected.
Result<Endpoint> parse_endpoint(std::string_view url);

}  // namespace redlock::net

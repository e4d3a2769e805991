#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <redlock/result.hpp>

namespace redlock::net {

enum class Scheme { redis, rediss, unix_socket };

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
};

/// Parses redis://[[user]:password@]host[:port][/db], rediss://..., unix:///path[?db=N]
/// (percent-escapes allowed in user and password). On failure: errc::invalid_argument with
/// a message naming the URL (password masked) and what is wrong with it.
///
/// Also accepted: unix://[[user]:password@]/path[?db=N]; a scheme in any case; a raw '@'
/// or '/' in a password (credentials end at the last '@'); "[v6%25zone]". Rejected: a
/// user without a password, credentials without ':', ports outside 1-65535, anything
/// after the db. Message format: invalid node URL "<masked URL>": <what is wrong>.
Result<Endpoint> parse_endpoint(std::string_view url);

}  // namespace redlock::net

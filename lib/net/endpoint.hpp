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
  std::string host;       ///< Without brackets for IPv6 literals. Empty for unix.
  std::uint16_t port = 6379;
  std::string path;       ///< unix socket path.
  int db = 0;
  std::string username;   ///< ACL user; empty = "default" (AUTH with the password only).
  std::string password;   ///< Empty = no AUTH.
  std::string display;    ///< The URL with the password replaced by "***": safe to log.
};

/// Parses redis://[[user]:password@]host[:port][/db], rediss://..., unix:///path[?db=N]
/// (percent-escapes allowed in user and password). On failure: errc::invalid_argument with
/// a message naming the URL (password masked) and what is wrong with it.
Result<Endpoint> parse_endpoint(std::string_view url);

}  // namespace redlock::net

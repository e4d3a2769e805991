#pragma once
// The one place where libuv's negative codes, hiredis reader errors and Redis error
// replies become redlock::errc codes and words. Every detail names the node ("where":
// host:port or the socket path) and the cause, so a log line needs no context.

#include <string>
#include <string_view>
#include <system_error>

#include <redlock/error.hpp>

namespace redlock::net {

struct NetError {
  std::error_code code;
  std::string detail;
  int uv_status = 0;  ///< the libuv code behind a from_uv() error (lets a layer reword it)
};

/// "connection refused (ECONNREFUSED)"; "connection closed by peer (EOF)" for UV_EOF.
std::string uv_error_text(int status);

/// errc::connection_error, "<operation> <where>: <uv_error_text>",
/// e.g. "connect 127.0.0.1:7101: connection refused (ECONNREFUSED)".
NetError from_uv(std::string_view operation, std::string_view where, int status);

/// errc::protocol_error, "<where>: protocol error: <reader's text>".
NetError from_reader(std::string_view where, std::string_view reader_error);

/// The code of a Redis error reply: auth_error for NOAUTH, WRONGPASS and the "invalid
/// password" / "invalid username-password pair" wordings of older servers; redis_error
/// otherwise.
std::error_code classify_error_reply(std::string_view text) noexcept;

/// True for an ACL denial: NOPERM, or its wording for a command or key inside a script
/// ("The user executing the script can't ...").
bool is_permission_error(std::string_view text) noexcept;

/// `text` in single quotes, as details quote what a user wrote or a server answered.
std::string quoted(std::string_view text);

/// True for the EVALSHA miss that triggers the EVAL fallback.
bool is_noscript(std::string_view text) noexcept;

}  // namespace redlock::net

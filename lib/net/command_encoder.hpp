// RESP encoding of commands, written straight into a connection's output buffer.
//
// hiredis' redisFormatCommandArgv produces the same bytes, but it formats every length
// with sprintf and returns each command in a fresh malloc'd buffer that is then copied:
// on the hot path that was 44 % of the client's instructions per lock cycle
// (docs/performance.md). hiredis stays the reply parser; the unit test checks these bytes
// against its formatter.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace redlock::net {

/// Appends "*<count>\r\n": the header of a command of `count` arguments.
void append_array_header(std::string& out, std::size_t count);

/// Appends "$<size>\r\n<argument>\r\n" (binary-safe).
void append_bulk(std::string& out, std::string_view argument);

/// Appends a whole command: the array header, then each argument as a bulk string.
void append_command(std::string& out, std::span<const std::string_view> argv);

}  // namespace redlock::net

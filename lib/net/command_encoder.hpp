// RESP encoding of commands, written straight into a connection's output buffer.
//
// hiredis' redisFormatCommandArgv produces the same bytes, but it formats every length
// with sprintf and returns each command in a fresh malloc'd buffer that is then copied:
// on the hot path that was 44 % of the client's instructions per lock cycle
// (docs/performance-history.md). hiredis stays the reply parser; the unit test checks these bytes
// against its formatter.
//
// A command is sized first and the buffer grown once, then written through a pointer:
// appending line by line paid a capacity check and a memcpy call per line, three per
// argument, which was a quarter of the client's instructions per cycle.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace redlock::net {

/// The encoded size of "*<count>\r\n".
std::size_t array_header_size(std::size_t count) noexcept;

/// The encoded size of "$<size>\r\n<argument>\r\n".
std::size_t bulk_size(std::string_view argument) noexcept;

/// Appends "*<count>\r\n": the header of a command of `count` arguments, for a command
/// whose arguments are partly encoded already (a script re-sent with its source).
void append_array_header(std::string& out, std::size_t count);

/// Appends "$<size>\r\n<argument>\r\n" (binary-safe).
void append_bulk(std::string& out, std::string_view argument);

/// Appends a whole command: the array header, then each argument as a bulk string
/// (binary-safe).
void append_command(std::string& out, std::span<const std::string_view> argv);

/// The same for a command whose arguments come in consecutive parts (a script call's
/// name and digest, then its keys, then its other arguments), without gathering them.
void append_command(std::string& out,
                    std::initializer_list<std::span<const std::string_view>> parts);

}  // namespace redlock::net

#pragma once
// A lock command's reply read where it lies. Nearly every reply a lock cycle gets is one
// line (":1", "+OK", "-ERR ...") or a short bulk string ("$-1", a holder's value), and
// hiredis' reader copied each into its buffer, built a task for it, allocated its text
// and handed it out as an object to free: about 200 instructions per reply, ten replies
// a cycle. Such a reply, when it arrives whole at the start of what the socket read, is
// read here in place instead, in one pass; everything else (arrays, longer strings, a
// reply cut by the read, any shape hiredis reads its own way) is left to hiredis.

#include <cstddef>
#include <string_view>

struct redisReply;

namespace redlock::net {

/// The longest bulk string read in place. A lock value is 32 bytes, a holder's value
/// the same; longer ones are rare enough for hiredis.
inline constexpr std::size_t max_simple_bulk = 512;

/// Reads the reply at the start of `bytes` into `reply` when it is a whole status, error,
/// integer, nil or bulk string of at most max_simple_bulk bytes, exactly as hiredis would
/// read it: `reply` then has hiredis' type and fields, its `str` (not NUL-terminated)
/// pointing into `bytes`, and the bytes the reply spans are returned. 0 (and `reply`
/// untouched) for anything else.
std::size_t read_simple_reply(std::string_view bytes, redisReply& reply) noexcept;

}  // namespace redlock::net

#include "net/simple_reply.hpp"

#include <hiredis/hiredis.h>

#include <cstring>

namespace redlock::net {
namespace {

// Where the line that starts at `from` ends ("\r\n" follows it): npos when the first '\r'
// is not followed by '\n' (hiredis would read past it) or the line is not whole yet.
std::size_t line_end(std::string_view bytes, std::size_t from) noexcept {
  const std::size_t cr = bytes.find('\r', from);
  if (cr == std::string_view::npos || cr + 1 >= bytes.size() || bytes[cr + 1] != '\n') {
    return std::string_view::npos;
  }
  return cr;
}

// The line at `from` when it is an integer as Redis writes it: "0", or an optional '-'
// and 1 to 18 digits without a leading zero (no long long overflows), then "\r\n". Read
// in one pass: where it ends, or npos. hiredis refuses "-0", "+5", "007" and the empty
// line; those, and longer numbers, are left to it, to be refused or read its own way.
std::size_t read_integer_line(std::string_view bytes, std::size_t from, long long& value) noexcept {
  constexpr std::size_t max_digits = 18;
  std::size_t at = from;
  const bool negative = at < bytes.size() && bytes[at] == '-';
  if (negative) ++at;
  const std::size_t digits_from = at;
  long long magnitude = 0;
  while (at < bytes.size() && bytes[at] >= '0' && bytes[at] <= '9') {
    if (at - digits_from == max_digits) return std::string_view::npos;
    magnitude = magnitude * 10 + (bytes[at] - '0');
    ++at;
  }
  const std::size_t digits = at - digits_from;
  if (digits == 0 || (bytes[digits_from] == '0' && (digits > 1 || negative))) {
    return std::string_view::npos;
  }
  if (at + 1 >= bytes.size() || bytes[at] != '\r' || bytes[at + 1] != '\n') {
    return std::string_view::npos;
  }
  value = negative ? -magnitude : magnitude;
  return at + 2;
}

}  // namespace

std::size_t read_simple_reply(std::string_view bytes, redisReply& reply) noexcept {
  if (bytes.size() < 4) return 0;  // the shortest whole reply is ":0\r\n"
  const char type = bytes[0];
  switch (type) {
    case '+':
    case '-': {
      const std::size_t end = line_end(bytes, 1);
      if (end == std::string_view::npos) return 0;
      std::memset(&reply, 0, sizeof reply);
      reply.type = type == '+' ? REDIS_REPLY_STATUS : REDIS_REPLY_ERROR;
      reply.str = const_cast<char*>(bytes.data() + 1);
      reply.len = end - 1;
      return end + 2;
    }
    case ':': {
      // A lock script's usual answer, one digit (":1", ":0"), without the general loop.
      if (bytes[1] >= '0' && bytes[1] <= '9' && bytes[2] == '\r' && bytes[3] == '\n') {
        std::memset(&reply, 0, sizeof reply);
        reply.type = REDIS_REPLY_INTEGER;
        reply.integer = bytes[1] - '0';
        return 4;
      }
      long long value = 0;
      const std::size_t after = read_integer_line(bytes, 1, value);
      if (after == std::string_view::npos) return 0;
      std::memset(&reply, 0, sizeof reply);
      reply.type = REDIS_REPLY_INTEGER;
      reply.integer = value;
      return after;
    }
    case '$': {
      // A grant's answer to SET NX GET: nil.
      if (bytes.size() >= 5 && std::memcmp(bytes.data(), "$-1\r\n", 5) == 0) {
        std::memset(&reply, 0, sizeof reply);
        reply.type = REDIS_REPLY_NIL;
        return 5;
      }
      long long length = 0;
      const std::size_t after_line = read_integer_line(bytes, 1, length);
      if (after_line == std::string_view::npos) return 0;
      if (length == -1) {
        std::memset(&reply, 0, sizeof reply);
        reply.type = REDIS_REPLY_NIL;
        return after_line;
      }
      if (length < 0 || static_cast<unsigned long long>(length) > max_simple_bulk) return 0;
      const auto size = static_cast<std::size_t>(length);
      // hiredis takes the two bytes after the text for "\r\n" unread; only replies that
      // have them, as Redis writes them, are read here.
      if (bytes.size() < after_line + size + 2 || bytes[after_line + size] != '\r' ||
          bytes[after_line + size + 1] != '\n') {
        return 0;
      }
      std::memset(&reply, 0, sizeof reply);
      reply.type = REDIS_REPLY_STRING;
      reply.str = const_cast<char*>(bytes.data() + after_line);
      reply.len = size;
      return after_line + size + 2;
    }
    default:
      return 0;
  }
}

}  // namespace redlock::net

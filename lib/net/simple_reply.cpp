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

// An integer as Redis writes it: "0", or an optional '-' and 1 to 18 digits without a
// leading zero (no long long overflows). hiredis refuses "-0", "+5", "007" and the empty
// line; those, and longer numbers, are left to it, to be refused or read its own way.
bool read_integer(std::string_view text, long long& value) noexcept {
  if (text == "0") {
    value = 0;
    return true;
  }
  bool negative = false;
  if (!text.empty() && text.front() == '-') {
    negative = true;
    text.remove_prefix(1);
  }
  if (text.empty() || text.size() > 18 || text.front() == '0') return false;
  long long magnitude = 0;
  for (const char digit : text) {
    if (digit < '0' || digit > '9') return false;
    magnitude = magnitude * 10 + (digit - '0');
  }
  value = negative ? -magnitude : magnitude;
  return true;
}

}  // namespace

std::size_t read_simple_reply(std::string_view bytes, redisReply& reply) noexcept {
  if (bytes.size() < 4) return 0;  // the shortest whole reply is ":0\r\n"
  const char type = bytes[0];
  const std::size_t end = line_end(bytes, 1);
  if (end == std::string_view::npos) return 0;
  const std::string_view line = bytes.substr(1, end - 1);
  const std::size_t after_line = end + 2;
  switch (type) {
    case '+':
    case '-':
      std::memset(&reply, 0, sizeof reply);
      reply.type = type == '+' ? REDIS_REPLY_STATUS : REDIS_REPLY_ERROR;
      reply.str = const_cast<char*>(line.data());
      reply.len = line.size();
      return after_line;
    case ':': {
      long long value = 0;
      if (!read_integer(line, value)) return 0;
      std::memset(&reply, 0, sizeof reply);
      reply.type = REDIS_REPLY_INTEGER;
      reply.integer = value;
      return after_line;
    }
    case '$': {
      long long length = 0;
      if (!read_integer(line, length)) return 0;
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

#include "net/command_encoder.hpp"

#include <charconv>
#include <cstring>

namespace redlock::net {
namespace {

// Lengths and counts are short: compared, not divided.
std::size_t decimal_digits(std::size_t number) noexcept {
  if (number < 10) return 1;
  if (number < 100) return 2;
  std::size_t digits = 3;
  for (number /= 1000; number > 0; number /= 10) ++digits;
  return digits;
}

char* write_line(char* at, char type, std::size_t number) noexcept {
  *at++ = type;
  if (number < 10) {
    *at++ = static_cast<char>('0' + number);  // the common case: short lengths and counts
  } else if (number < 100) {
    *at++ = static_cast<char>('0' + number / 10);
    *at++ = static_cast<char>('0' + number % 10);
  } else {
    at = std::to_chars(at, at + 20, number).ptr;
  }
  *at++ = '\r';
  *at++ = '\n';
  return at;
}

char* write_bulk(char* at, std::string_view argument) noexcept {
  at = write_line(at, '$', argument.size());
  if (!argument.empty()) std::memcpy(at, argument.data(), argument.size());
  at += argument.size();
  *at++ = '\r';
  *at++ = '\n';
  return at;
}

}  // namespace

std::size_t array_header_size(std::size_t count) noexcept {
  return 1 + decimal_digits(count) + 2;
}

std::size_t bulk_size(std::string_view argument) noexcept {
  return 1 + decimal_digits(argument.size()) + 2 + argument.size() + 2;
}

void append_array_header(std::string& out, std::size_t count) {
  const std::size_t begin = out.size();
  out.resize(begin + array_header_size(count));
  write_line(out.data() + begin, '*', count);
}

void append_bulk(std::string& out, std::string_view argument) {
  const std::size_t begin = out.size();
  out.resize(begin + bulk_size(argument));
  write_bulk(out.data() + begin, argument);
}

void append_command(std::string& out, std::span<const std::string_view> argv) {
  append_command(out, {argv});
}

void append_command(std::string& out,
                    std::initializer_list<std::span<const std::string_view>> parts) {
  std::size_t count = 0;
  std::size_t size = 0;
  for (auto part : parts) {
    count += part.size();
    for (std::string_view argument : part) size += bulk_size(argument);
  }
  size += array_header_size(count);
  const std::size_t begin = out.size();
  out.resize(begin + size);
  char* at = write_line(out.data() + begin, '*', count);
  for (auto part : parts) {
    for (std::string_view argument : part) at = write_bulk(at, argument);
  }
}

}  // namespace redlock::net

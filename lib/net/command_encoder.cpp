#include "net/command_encoder.hpp"

#include <charconv>

namespace redlock::net {
namespace {

void append_line(std::string& out, char type, std::size_t number) {
  char text[24];
  text[0] = type;
  const auto end = std::to_chars(text + 1, text + sizeof text - 2, number).ptr;
  end[0] = '\r';
  end[1] = '\n';
  out.append(text, static_cast<std::size_t>(end + 2 - text));
}

}  // namespace

void append_array_header(std::string& out, std::size_t count) {
  append_line(out, '*', count);
}

void append_bulk(std::string& out, std::string_view argument) {
  append_line(out, '$', argument.size());
  out.append(argument);
  out.append("\r\n", 2);
}

void append_command(std::string& out, std::span<const std::string_view> argv) {
  append_array_header(out, argv.size());
  for (std::string_view argument : argv) append_bulk(out, argument);
}

}  // namespace redlock::net

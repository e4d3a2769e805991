#include "net/errors.hpp"

#include <uv.h>

namespace redlock::net {
namespace {

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

}  // namespace

std::string uv_error_text(int status) {
  if (status == UV_EOF) return "connection closed by peer (EOF)";
  return std::string(uv_strerror(status)) + " (" + uv_err_name(status) + ")";
}

NetError from_uv(std::string_view operation, std::string_view where, int status) {
  std::string detail;
  detail.reserve(operation.size() + where.size() + 48);
  detail.append(operation).append(" ").append(where).append(": ").append(uv_error_text(status));
  return {make_error_code(errc::connection_error), std::move(detail), status};
}

NetError from_reader(std::string_view where, std::string_view reader_error) {
  std::string detail(where);
  detail.append(": protocol error: ").append(reader_error);
  return {make_error_code(errc::protocol_error), std::move(detail)};
}

std::error_code classify_error_reply(std::string_view text) noexcept {
  if (starts_with(text, "NOAUTH") || starts_with(text, "WRONGPASS") ||
      text.find("invalid username-password") != std::string_view::npos ||
      starts_with(text, "ERR invalid password")) {
    return make_error_code(errc::auth_error);
  }
  return make_error_code(errc::redis_error);
}

bool is_permission_error(std::string_view text) noexcept {
  return starts_with(text, "NOPERM") ||
         text.find("The user executing the script can't") != std::string_view::npos;
}

bool is_noscript(std::string_view text) noexcept {
  return starts_with(text, "NOSCRIPT");
}

std::string quoted(std::string_view text) {
  // Built with append rather than operator+: GCC 12 at -O2 reports a false
  // -Wrestrict on "'" + std::string(...).
  std::string out;
  out.reserve(text.size() + 2);
  out += '\'';
  out += text;
  out += '\'';
  return out;
}

}  // namespace redlock::net

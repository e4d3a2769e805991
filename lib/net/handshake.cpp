#include "net/handshake.hpp"

#include <hiredis/hiredis.h>

#include "net/command_encoder.hpp"

namespace redlock::net {

bool Handshake::start(const Endpoint& endpoint, std::string& out) {
  count_ = 0;
  done_ = 0;
  if (!endpoint.password.empty()) {
    // Without an ACL user this is AUTH <password>, which every Redis version accepts.
    if (endpoint.username.empty()) {
      const std::array<std::string_view, 2> argv{"AUTH", endpoint.password};
      append_command(out, argv);
    } else {
      const std::array<std::string_view, 3> argv{"AUTH", endpoint.username, endpoint.password};
      append_command(out, argv);
    }
    steps_[count_++] = Step::auth;
  }
  if (endpoint.db != 0) {
    const std::string db = std::to_string(endpoint.db);
    const std::array<std::string_view, 2> argv{"SELECT", db};
    append_command(out, argv);
    steps_[count_++] = Step::select;
  }
  return count_ > 0;
}

Handshake::Outcome Handshake::on_reply(const redisReply* reply, const Endpoint& endpoint,
                                       std::string_view where, NetError& error) {
  const Step step = steps_[done_++];
  if (reply->type == REDIS_REPLY_ERROR) {
    const std::string_view text(reply->str, reply->len);
    std::string detail = step == Step::auth ? "AUTH on " + std::string(where) + " failed: "
                                            : "SELECT " + std::to_string(endpoint.db) + " on " +
                                                  std::string(where) + " failed: ";
    detail.append(text);
    error = {step == Step::auth ? make_error_code(errc::auth_error) : classify_error_reply(text),
             std::move(detail)};
    return Outcome::failed;
  }
  if (reply->type != REDIS_REPLY_STATUS) {
    error = {make_error_code(errc::protocol_error),
             std::string(where) + ": protocol error: unexpected reply type " +
                 std::to_string(reply->type) + " to " + (step == Step::auth ? "AUTH" : "SELECT")};
    return Outcome::failed;
  }
  return done_ == count_ ? Outcome::done : Outcome::more;
}

}  // namespace redlock::net

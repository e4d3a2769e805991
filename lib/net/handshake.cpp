#include "net/handshake.hpp"

#include <hiredis/hiredis.h>

#include "net/command_encoder.hpp"
#include "net/sentinel_resolution.hpp"

namespace redlock::net {

bool Handshake::start(const Endpoint& endpoint, std::string& out, Goal goal) {
  count_ = 0;
  done_ = 0;
  named_host_.clear();
  named_port_ = 0;
  named_role_age_.reset();
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
  if (goal == Goal::ask_sentinel) {
    const std::array<std::string_view, 3> argv{"SENTINEL", "GET-MASTER-ADDR-BY-NAME",
                                               endpoint.master_name};
    append_command(out, argv);
    steps_[count_++] = Step::ask_sentinel;
    // How long the server it names has been the master: a client meeting a replica
    // promoted a second ago cannot tell it from INFO, where its uptime may be days
    // (core::MemberLife's young-member rule). Its refusal fails nothing.
    const std::array<std::string_view, 3> master{"SENTINEL", "MASTER", endpoint.master_name};
    append_command(out, master);
    steps_[count_++] = Step::master_info;
  } else if (goal == Goal::confirm_master) {
    const std::array<std::string_view, 1> argv{"ROLE"};
    append_command(out, argv);
    steps_[count_++] = Step::role;
  }
  return count_ > 0;
}

Handshake::Outcome Handshake::on_sentinel_reply(const redisReply* reply, std::string_view where,
                                                NetError& error) {
  std::string problem;
  if (!read_master_address(reply, named_host_, named_port_, problem)) {
    error = {make_error_code(errc::connection_error), std::string(where) + " " + problem};
    return Outcome::failed;
  }
  return done_ == count_ ? Outcome::done : Outcome::more;
}

Handshake::Outcome Handshake::on_role_reply(const redisReply* reply, std::string_view where,
                                            NetError& error) {
  std::string role;
  if (!read_role_is_master(reply, role)) {
    error = {make_error_code(errc::connection_error),
             "ROLE on " + std::string(where) + " answered '" + role + "', not master"};
    return Outcome::failed;
  }
  return done_ == count_ ? Outcome::done : Outcome::more;
}

Handshake::Outcome Handshake::on_reply(const redisReply* reply, const Endpoint& endpoint,
                                       std::string_view where, NetError& error) {
  const Step step = steps_[done_++];
  if (step == Step::ask_sentinel) return on_sentinel_reply(reply, where, error);
  if (step == Step::role) return on_role_reply(reply, where, error);
  if (step == Step::master_info) {
    named_role_age_ = read_role_reported_time(reply, named_host_, named_port_);
    return done_ == count_ ? Outcome::done : Outcome::more;
  }
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

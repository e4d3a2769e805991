#include "member/member_watch.hpp"

#include <hiredis/hiredis.h>

#include <array>
#include <optional>
#include <string_view>

namespace redlock::detail {

void MemberWatch::ask(net::Connection& connection) {
  if (asking_ || !life_.rules().any()) return;
  asking_ = true;
  const std::array<std::string_view, 1> info{"INFO"};
  connection.command(info, timeout_, [this, &connection](const net::ReplyView& view) {
    asking_ = false;
    // A dropped connection says nothing of the server: the next one asks again.
    if (view.error == errc::connection_error || view.error == errc::cancelled) {
      life_.fell_silent();
      return;
    }
    if (view.error == errc::timeout) {
      life_.fell_silent();
      return ask(connection);
    }
    const redisReply* reply = view.error ? nullptr : view.reply;
    std::optional<core::ServerIdentity> identity;
    if (reply != nullptr && reply->type == REDIS_REPLY_STRING) {
      identity = core::parse_server_identity({reply->str, reply->len});
    }
    if (identity) {
      identity->master_for = connection.master_role_age();
      life_.learned(*identity, core::Clock::now());
    } else {
      life_.refused(core::Clock::now());
    }
  });
}

void MemberWatch::ready(net::Connection& connection) {
  if (!life_.rules().any()) return;
  life_.connected(core::Clock::now());
  ask(connection);
}

}  // namespace redlock::detail

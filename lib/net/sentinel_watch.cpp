#include "net/sentinel_watch.hpp"

#include <hiredis/hiredis.h>

#include <array>
#include <utility>

namespace redlock::net {

namespace {
constexpr std::string_view switch_channel = "+switch-master";
}

SentinelWatch::SentinelWatch(uv_loop_s* loop, const ConnectionOptions& base,
                             std::function<void(std::string_view payload)> on_switch)
    : loop_(loop), on_switch_(std::move(on_switch)) {
  base_.connect_timeout = base.connect_timeout;
  base_.reconnect_min = base.reconnect_min;
  base_.reconnect_max = base.reconnect_max;
  base_.random = base.random;
  base_.tls = base.tls;
}

void SentinelWatch::watch(const Endpoint& sentinel) {
  if (connection_ && watched_ == sentinel.display) return;
  ConnectionOptions options = base_;
  options.endpoint = sentinel;
  options.on_message = [this](const redisReply* message) {
    const redisReply* channel = message->element[1];
    const redisReply* payload = message->element[2];
    if (std::string_view(channel->str, channel->len) != switch_channel) return;
    if (payload->type != REDIS_REPLY_STRING) return;
    on_switch_(std::string_view(payload->str, payload->len));
  };
  // Subscriptions end with the connection; each new one subscribes again.
  options.on_ready = [this] {
    const std::array<std::string_view, 2> argv{"SUBSCRIBE", switch_channel};
    connection_->command(argv, base_.connect_timeout, [](const ReplyView&) {});
  };
  watched_ = sentinel.display;
  connection_.reset(Connection::create(loop_, std::move(options)));
}

void SentinelWatch::stop() {
  watched_.clear();
  connection_.reset();
}

}  // namespace redlock::net

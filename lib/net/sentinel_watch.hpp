#pragma once
// A Sentinel group's master can change while a connection to it is healthy: after a
// failover the sentinels ordered, the old master stays up, and stays a master, until
// the sentinels get round to demoting it (seconds later). A connection that waited for
// READONLY or a disconnect would keep writing to it meanwhile, while clients that looked
// the group up afresh write to the new master. SentinelWatch subscribes to
// +switch-master on the sentinel that named the master and hands each announcement to
// its owner, which drops its connection and looks the master up again.
//
// Loop thread only. The watch's own connection reconnects by itself (with the owner's
// backoff) and subscribes again each time it is ready.

#include <functional>
#include <string>
#include <string_view>

#include "net/connection.hpp"

namespace redlock::net {

class SentinelWatch {
 public:
  /// `base`: timeouts, backoff and TLS settings for the watch's connection.
  /// `on_switch` gets each +switch-master payload ("<name> <old ip> <old port> <new ip>
  /// <new port>"), for every master the sentinel watches; it may close the owner (and so
  /// this watch).
  SentinelWatch(uv_loop_s* loop, const ConnectionOptions& base,
                std::function<void(std::string_view payload)> on_switch);

  /// Watches `sentinel` (an Endpoint aimed at one sentinel); keeps the current
  /// subscription when it is that sentinel already.
  void watch(const Endpoint& sentinel);
  /// Drops the subscription.
  void stop();

 private:
  uv_loop_s* loop_;
  ConnectionOptions base_;
  std::function<void(std::string_view)> on_switch_;
  std::string watched_;  // the sentinel's host:port, "" when not watching
  ConnectionPtr connection_;
};

}  // namespace redlock::net

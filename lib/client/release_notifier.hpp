#pragma once
// Waiting without polling: release() publishes on "<key>:released" on every node where
// it deleted the lock, and waiters subscribe to that channel on every node through one
// subscriber connection per node (shared by all keys and waiters of a Client).
//
// A waiter counts as subscribed once a quorum of nodes confirmed the SUBSCRIBE: any
// holder held a quorum, the two quorums share a node, and the holder's release
// publishes there — so a release after that point cannot go unheard (unless that one
// node fails, which the waiter's retry timer covers).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "net/connection.hpp"

namespace redlock::detail {

class ReleaseNotifier {
 public:
  using WaiterId = std::uint64_t;

  /// Loop thread only. `nodes` configures one subscriber connection per node; they
  /// connect on the first watch().
  ReleaseNotifier(uv_loop_s* loop, std::vector<net::ConnectionOptions> nodes, int quorum,
                  std::chrono::milliseconds command_timeout);
  ~ReleaseNotifier();

  /// Calls `on_release` each time a release of `key` is announced, until unwatch().
  /// `ready` runs once, when a quorum of nodes confirmed the subscription or that became
  /// impossible (waiting then relies on the retry timer) — possibly before watch()
  /// returns, if the key's channel is already subscribed.
  WaiterId watch(const std::string& key, std::function<void()> on_release, std::function<void()> ready);
  void unwatch(WaiterId id);

  /// Closes the subscriber connections; pending `ready` callbacks run.
  void close();

 private:
  struct Channel {
    std::unordered_map<WaiterId, std::function<void()>> waiters;
    std::vector<std::function<void()>> waiting_for_ready;
    std::string last_released;  // each release is published by up to N nodes: wake once
    int confirmed = 0;
    int failed = 0;
    bool ready = false;
  };

  void connect();
  void subscribe(std::size_t node, const std::string& channel, bool count_for_ready);
  void on_message(const redisReply* message);
  void settle(Channel& channel);

  uv_loop_s* loop_;
  std::vector<net::ConnectionOptions> node_options_;
  int quorum_;
  std::chrono::milliseconds command_timeout_;
  std::vector<net::ConnectionPtr> subscribers_;
  std::unordered_map<std::string, Channel> channels_;
  std::unordered_map<WaiterId, std::string> waiter_channels_;
  WaiterId next_id_ = 1;
  bool closed_ = false;
  // Replies of SUBSCRIBE commands find this object through it; reset on close so that
  // late callbacks do nothing.
  std::shared_ptr<ReleaseNotifier*> self_;
};

}  // namespace redlock::detail

#pragma once
// Waiting without polling: a holder's release publishes on "<key>:released" on every
// node where it deleted the lock (a failed attempt's leftovers do not: node.hpp,
// Announce), and waiters subscribe to that channel on every node through one
// subscriber connection per node (shared by all keys and waiters of a Client).
//
// A waiter counts as subscribed once a quorum of nodes confirmed the SUBSCRIBE: any
// holder held a quorum, the two quorums share a node, and the holder's release
// publishes there — so a release after that point cannot go unheard (unless that one
// node fails, which the waiter's retry timer covers).
//
// An announcement wakes one waiter of the key, not all (waiters.hpp): the notifier keeps
// each key's WaiterQueue and is told when a waiter attempts and how the attempt ended.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "client/waiters.hpp"
#include "net/connection.hpp"

namespace redlock::detail {

class ReleaseNotifier {
 public:
  using WaiterId = WaiterQueue::Id;

  /// Loop thread only. `nodes` configures one subscriber connection per node; they
  /// connect on the first watch().
  ReleaseNotifier(uv_loop_s* loop, std::vector<net::ConnectionOptions> nodes, int quorum,
                  std::chrono::milliseconds command_timeout);
  ~ReleaseNotifier();

  /// Queues a waiter for `key` and calls `on_woken` whenever, after an announced release
  /// of `key`, it is this waiter's turn to attempt (one waiter per announcement, see
  /// WaiterQueue), until unwatch(). The waiter counts as attempting until its first
  /// attempt_failed(). `ready` runs once, when a quorum of nodes confirmed the
  /// subscription or that became impossible (waiting then relies on the retry timer) —
  /// possibly before watch() returns, if the key's channel is already subscribed.
  WaiterId watch(const std::string& key, std::function<void()> on_woken, std::function<void()> ready);
  /// The waiter starts an acquire attempt (any attempt: first, timed or woken).
  void attempt_started(WaiterId id);
  /// The waiter's attempt failed; `holder_seen` as in WaiterQueue::attempt_failed. May
  /// wake another waiter before it returns. True: attempt again at once (a release was
  /// announced while the attempts were in flight).
  bool attempt_failed(WaiterId id, bool holder_seen);
  /// The waiter is done (`acquired` the lock, or gave up). May wake another waiter before
  /// it returns.
  void unwatch(WaiterId id, bool acquired);

  /// Closes the subscriber connections; pending `ready` callbacks run.
  void close();

 private:
  struct Channel {
    WaiterQueue queue;
    std::unordered_map<WaiterId, std::function<void()>> on_woken;
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
  Channel* channel_of(WaiterId id);
  // Runs the waiter's on_woken, looked up afresh: it may unwatch and erase its channel.
  void wake(const std::string& name, std::optional<WaiterId> id);

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

#pragma once
// Releases are announced by the nodes that applied them (the release script, see
// Announce), and waiters subscribe to each key's announcements on every member through
// one subscriber per member (member/member_subscriber.hpp, which knows how each kind of
// member announces), shared by all keys and waiters of a Client.
//
// A waiter counts as subscribed once a quorum of members confirmed the subscription: any
// release that can free the lock for it is then announced by at least one member it
// hears (a release must reach a quorum to free the lock; fewer when that quorum's
// members fail, which the waiter's retry timer covers).
//
// An announcement wakes one waiter of the key, not all (waiters.hpp): the notifier keeps
// each key's WaiterQueue and is told when a waiter attempts and how the attempt ended.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "client/engine/waiters.hpp"
#include "member/member_subscriber.hpp"
#include "net/connection.hpp"

namespace redlock::detail {

class ReleaseNotifier {
 public:
  using WaiterId = WaiterQueue::Id;

  /// Told, once per node, that the node refused a subscription (an ACL user without
  /// +subscribe, +ssubscribe or the channel's pattern): its waiters are then woken by
  /// their retry timers alone, which nothing else would show.
  using Refused = std::function<void(std::string_view why)>;

  /// Loop thread only. `nodes` configures one subscriber connection per node; they
  /// connect on the first watch(). `refused`: by node, may be empty or hold empty ones.
  ReleaseNotifier(uv_loop_s* loop, std::vector<net::ConnectionOptions> nodes, int quorum,
                  std::chrono::milliseconds command_timeout, std::vector<Refused> refused = {});
  ~ReleaseNotifier();

  struct Watched {
    WaiterId id;
    /// A quorum already confirmed the key's subscription (or that became impossible):
    /// `ready` will not run, the waiter may attempt at once.
    bool ready;
  };
  /// Queues a waiter for `key` and calls `on_woken` whenever, after an announced release
  /// of `key`, it is this waiter's turn to attempt (one waiter per announcement, see
  /// WaiterQueue), until unwatch(). The waiter counts as attempting until its first
  /// attempt_failed() or wait_for_turn(). Unless Watched::ready, `ready` runs once, later,
  /// when a quorum of nodes confirmed the subscription or that became impossible
  /// (waiting then relies on the retry timer).
  Watched watch(const std::string& key, std::function<void()> on_woken,
                std::function<void()> ready);
  /// Other waiters of this client that joined before `id` still wait for the key.
  bool others_waiting_before(WaiterId id);
  /// The waiter waits to be woken (or for its own timer) without attempting first.
  void wait_for_turn(WaiterId id);
  /// The waiter starts an acquire attempt (any attempt: first, timed or woken).
  void attempt_started(WaiterId id);
  /// The waiter's attempt failed; `holder_seen` as in WaiterQueue::attempt_failed. May
  /// wake another waiter before it returns. True: attempt again at once (a release was
  /// announced while the attempts were in flight).
  bool attempt_failed(WaiterId id, bool holder_seen);
  /// `holder` is among the last releases announced on the waiter's key: a node that
  /// still has it had not applied that release yet, so it is leaving, however long its
  /// TTL (the other nodes' announcements of it wake no one again).
  bool announced_released(WaiterId id, std::string_view holder);
  /// The waiter is done (`acquired` the lock, or gave up). May wake another waiter before
  /// it returns.
  void unwatch(WaiterId id, bool acquired);

  using ListenerId = std::uint64_t;
  /// Calls `on_release` on every announced release of `key` (once per release, however
  /// many nodes announce it) and on every member's announcement of a new leader of the
  /// key (scripts/election_scripts.hpp: those wake no waiter), until unlisten(). A listener is no
  /// waiter: it takes no turn and never takes a waiter's wake. It subscribes as watch() does,
  /// without waiting for the subscription to be confirmed (an observer re-reads on its own timer
  /// anyway). `on_release(elected)`: false for a release, true for a new leader's announcement.
  ListenerId listen(const std::string& key, std::function<void(bool elected)> on_release);
  /// Stops the listener; unknown ids (already stopped, or after close()) are ignored.
  void unlisten(ListenerId id);

  /// This client just sent the owner-checked release of `key` held by `value` to every
  /// node: wakes a waiter as the announcement would, at once. Its attempt is then written
  /// behind the release on each node's connection, and every node runs the two in that
  /// order, so a handoff inside one client takes one round trip instead of two (release,
  /// then announcement, then acquire). The announcement that follows from the nodes
  /// carries the same value and wakes nobody else.
  void released_locally(const std::string& key, const std::string& value);

  /// Closes the subscriber connections; pending `ready` callbacks run.
  void close();

 private:
  struct Channel {
    WaiterQueue queue;
    std::unordered_map<WaiterId, std::function<void()>> on_woken;
    std::unordered_map<ListenerId, std::function<void(bool)>> listeners;
    std::vector<std::function<void()>> waiting_for_ready;
    // Each release is published by up to N nodes, and announced first by this client when
    // it released: one wake per release. The nodes' messages of one release can arrive
    // after the next release was announced, so the last few values are remembered.
    std::array<std::string, 8> recent_releases;
    std::size_t next_release_at = 0;
    std::string key;
    int confirmed = 0;
    int failed = 0;
    bool ready = false;
    // A channel erased when its last waiter left and created again for a new one must not
    // count the confirmations of the old SUBSCRIBE: they prove nothing about the new one.
    std::uint64_t generation = 0;

    /// Someone needs the subscription: a waiter or a listener.
    bool in_use() const { return !queue.empty() || !listeners.empty(); }
  };

  void connect();
  // The channel of `key`, created (and subscribed on every node) if it did not exist.
  Channel& open_channel(const std::string& key, const std::string& name);
  // Unsubscribes and forgets the channel `it` names once nobody needs it.
  void drop_if_unused(std::unordered_map<std::string, Channel>::iterator it);
  // Tells every listener of `channel` of a release, or of a new leader (`elected`).
  static void tell_listeners(const Channel& channel, bool elected);
  void subscribe(std::size_t node, const std::string& channel, bool count_for_ready);
  void on_message(const std::string& name, const redisReply* payload);
  // Wakes a waiter of `channel_name` unless `released` was already announced there.
  void announce(const std::string& channel_name, std::string released);
  void settle(Channel& channel);
  Channel* channel_of(WaiterId id);
  // Runs the waiter's on_woken, looked up afresh: it may unwatch and erase its channel.
  void wake(const std::string& name, std::optional<WaiterId> id);

  uv_loop_s* loop_;
  std::vector<net::ConnectionOptions> node_options_;
  int quorum_;
  std::chrono::milliseconds command_timeout_;
  std::vector<std::unique_ptr<MemberSubscriber>> subscribers_;
  std::unordered_map<std::string, Channel> channels_;
  std::unordered_map<WaiterId, std::string> waiter_channels_;
  std::unordered_map<ListenerId, std::string> listener_channels_;
  std::vector<Refused> refused_;  // per node, handed to its subscriber
  WaiterId next_id_ = 1;
  std::uint64_t next_generation_ = 1;
  bool closed_ = false;
  // Replies of SUBSCRIBE commands find this object through it; reset on close so that
  // late callbacks do nothing.
  std::shared_ptr<ReleaseNotifier*> self_;
};

}  // namespace redlock::detail

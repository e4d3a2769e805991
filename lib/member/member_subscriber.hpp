#pragma once
// One member's subscriber connection for release announcements. Where a member announces
// is its kind's to say (member_kind.hpp): "<key>:released" to every subscriber, or, on a
// Redis Cluster member, a shard channel in the key's slot that only the key's shard
// publishes on (SPUBLISH), SSUBSCRIBEd on that shard (net/cluster_router.hpp routes it)
// and again when a shard's connection is ready again (a reconnect, a replica promoted) or
// the server ends the subscription because the slot moved ("sunsubscribe"). A
// subscription that fails for any reason but a refusal (its connection lost, its deadline
// passed, redirected twice while a cluster fails over) is asked again after a short
// jittered back-off while its channel is in use: a cluster may route the renewal to the
// failed master a moment before its slot map names the replica that replaced it, and
// nothing else would ask again once the replica's connection is ready. A cluster
// without sharded pub/sub (before Redis 7.0) PUBLISHes on the shard channel, SUBSCRIBEd
// on any of its nodes. Whoever subscribes sees channels by their plain name, whatever
// the kind.

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "core/random_source.hpp"
#include "member/member_kind.hpp"
#include "net/connection.hpp"
#include "net/timer.hpp"

struct uv_loop_s;

namespace redlock::detail {

class MemberSubscriber {
 public:
  struct Hooks {
    /// A message on channel `name` ("<key>:released"); `payload` as the server sent it.
    std::function<void(const std::string& name, const redisReply* payload)> on_message;
    /// Whether channel `name` is still wanted: the subscriber renews only those after a
    /// reconnect or a moved slot.
    std::function<bool(const std::string& name)> in_use;
    /// Every channel still wanted, to renew after a reconnect.
    std::function<void(const std::function<void(const std::string& name)>&)> for_each_in_use;
    /// Told once if the member refuses a subscription (an ACL user without +subscribe,
    /// +ssubscribe or the channel's pattern): waiters are then woken by their retry timers
    /// alone, which nothing else would show. May be empty.
    std::function<void(std::string_view why)> refused;
  };

  /// Loop thread only. Connects at once; the member's kind is the one its URL names
  /// (make_member_kind).
  MemberSubscriber(uv_loop_s* loop, net::ConnectionOptions options,
                   std::chrono::milliseconds timeout, Hooks hooks);
  ~MemberSubscriber();
  MemberSubscriber(const MemberSubscriber&) = delete;
  MemberSubscriber& operator=(const MemberSubscriber&) = delete;

  /// Subscribes to the announcements of `key` (channel `name`, "<key>:released");
  /// `confirmed(ok)` runs once, when the member confirmed or failed it.
  void subscribe(const std::string& key, const std::string& name,
                 std::function<void(bool ok)> confirmed);
  /// Ends the subscription of channel `name` (for a cluster member, its shard channel,
  /// unless another channel shares it: "k" and "{k}" both announce on "{k}:released").
  void unsubscribe(const std::string& name);

 private:
  // How the member announces: plain PUBLISH on "<key>:released"; SPUBLISH on the channel
  // its kind names; or, where SSUBSCRIBE is answered "unknown command", PUBLISH there.
  enum class Pubsub { plain, sharded, plain_in_slot };

  void send_subscribe(const std::string& name, std::function<void(bool ok)> confirmed);
  void on_message(const redisReply* message);
  // Asks for `name` again after the back-off of the current failure streak.
  void renew_later(const std::string& name);
  void renew_due();
  // The channel the member announces `name` on.
  const std::string& wire_name(const std::string& name) const;

  uv_loop_s* loop_;
  std::unique_ptr<MemberKind> kind_;
  std::chrono::milliseconds timeout_;
  Hooks hooks_;
  Pubsub pubsub_;
  // The channels announced elsewhere than on their plain name: plain name -> where.
  std::unordered_map<std::string, std::string> shard_of_;
  core::RandomSource random_;
  std::unordered_set<std::string> to_renew_;
  int renew_streak_ = 0;
  net::TimerPtr renew_timer_;
  // Replies find this object through it; reset when it goes so that late ones do nothing.
  std::shared_ptr<MemberSubscriber*> self_;
  net::ConnectionPtr connection_;  // last: closed before the members its callbacks touch
};

}  // namespace redlock::detail

#include "member/member_subscriber.hpp"

#include <hiredis/hiredis.h>

#include <array>
#include <utility>
#include <vector>

#include "core/backoff.hpp"

namespace redlock::detail {

namespace {

bool is_unknown_command(std::string_view error) {
  return error.find("unknown command") != std::string_view::npos;
}

// A cluster's answers while a slot changes hands: asked again, the subscription reaches
// the slot's owner once the cluster and the client's slot map agree on it.
bool is_passing(std::string_view error) {
  for (std::string_view word : {"MOVED ", "ASK ", "TRYAGAIN", "CLUSTERDOWN"}) {
    if (error.find(word) != std::string_view::npos) return true;
  }
  return false;
}

// Soon enough that a waiter hardly notices a failover, and never a stream of commands at
// a member that stays away.
constexpr core::Backoff renewal_backoff{std::chrono::milliseconds(20),
                                        std::chrono::milliseconds(2000), core::Jitter::upper_half};

}  // namespace

MemberSubscriber::MemberSubscriber(uv_loop_s* loop, net::ConnectionOptions options,
                                   std::chrono::milliseconds timeout, Hooks hooks)
    : loop_(loop),
      kind_(make_member_kind(options.endpoint, timeout)),
      timeout_(timeout),
      hooks_(std::move(hooks)),
      pubsub_(kind_->announces_by_shard() ? Pubsub::sharded : Pubsub::plain),
      random_(options.random ? options.random : core::system_random()),
      self_(std::make_shared<MemberSubscriber*>(this)) {
  options.random = random_;
  std::weak_ptr<MemberSubscriber*> weak = self_;
  // The member's own connection tells of a slot map it may not read.
  options.on_misconfigured = nullptr;
  options.on_message = [weak](const redisReply* message) {
    if (auto self = weak.lock()) (*self)->on_message(message);
  };
  // After a reconnect the server has forgotten our subscriptions: renew them. A cluster
  // runs this for each of its shards' connections (one that was down, a replica promoted
  // in its place): every channel is asked again and routed to its slot's owner, and a
  // server that already has it just confirms it.
  options.on_ready = [weak] {
    auto self = weak.lock();
    if (!self || !(*self)->hooks_.for_each_in_use) return;
    (*self)->hooks_.for_each_in_use(
        [&](const std::string& name) { (*self)->send_subscribe(name, nullptr); });
  };
  connection_.reset(net::Connection::create(loop, std::move(options)));
}

MemberSubscriber::~MemberSubscriber() {
  self_.reset();
}

const std::string& MemberSubscriber::wire_name(const std::string& name) const {
  const auto shard = shard_of_.find(name);
  return shard == shard_of_.end() ? name : shard->second;
}

void MemberSubscriber::subscribe(const std::string& key, const std::string& name,
                                 std::function<void(bool ok)> confirmed) {
  if (const auto channel = kind_->release_channel(key); !channel.empty()) {
    shard_of_.try_emplace(name, channel);
  }
  send_subscribe(name, std::move(confirmed));
}

void MemberSubscriber::send_subscribe(const std::string& name,
                                      std::function<void(bool ok)> confirmed) {
  std::weak_ptr<MemberSubscriber*> weak = self_;
  // A cluster routes a SSUBSCRIBE like a command for a key: to the shard that owns the
  // channel's slot, the key's, where the release script SPUBLISHes.
  const Pubsub kind = pubsub_;
  const std::array<std::string_view, 2> argv{kind == Pubsub::sharded ? "SSUBSCRIBE" : "SUBSCRIBE",
                                             wire_name(name)};
  connection_->command(
      argv, timeout_,
      [weak, name, kind, confirmed = std::move(confirmed)](const net::ReplyView& view) mutable {
        auto self = weak.lock();
        if (!self) {
          if (confirmed) confirmed(false);
          return;
        }
        // A cluster before Redis 7.0 has no sharded pub/sub: its release
        // scripts PUBLISH on the same channel instead, which reaches a
        // SUBSCRIBE on any of its nodes.
        if (kind == Pubsub::sharded && view.error == errc::redis_error &&
            is_unknown_command(view.detail)) {
          (*self)->pubsub_ = Pubsub::plain_in_slot;
          return (*self)->send_subscribe(name, std::move(confirmed));
        }
        const bool refused = view.error == errc::redis_error && !is_passing(view.detail);
        if (!view.error) {
          (*self)->renew_streak_ = 0;
        } else if (!refused && (*self)->hooks_.in_use && (*self)->hooks_.in_use(name)) {
          (*self)->renew_later(name);
        }
        if (refused) {
          if (auto told = std::exchange((*self)->hooks_.refused, nullptr)) {
            told(std::string(kind == Pubsub::sharded ? "SSUBSCRIBE" : "SUBSCRIBE") + " refused (" +
                 std::string(view.detail) +
                 "): waiters are not woken by releases on this node, only by "
                 "their retry timers (grant the user the command and the "
                 "channel's pattern, docs/security.md)");
          }
        }
        if (confirmed) confirmed(!view.error);
      });
}

void MemberSubscriber::renew_later(const std::string& name) {
  const bool armed = !to_renew_.empty();
  to_renew_.insert(name);
  if (armed) return;
  if (!renew_timer_) renew_timer_ = net::Timer::create(loop_);
  const auto delay = renewal_backoff.delay(renew_streak_, random_());
  renew_streak_ = core::next_streak(renew_streak_);
  std::weak_ptr<MemberSubscriber*> weak = self_;
  renew_timer_->start(delay, [weak] {
    if (auto self = weak.lock()) (*self)->renew_due();
  });
}

void MemberSubscriber::renew_due() {
  auto due = std::exchange(to_renew_, {});
  for (const auto& name : due) {
    if (hooks_.in_use && hooks_.in_use(name)) send_subscribe(name, nullptr);
  }
}

void MemberSubscriber::unsubscribe(const std::string& name) {
  const auto shard = shard_of_.find(name);
  if (shard == shard_of_.end()) {
    const std::array<std::string_view, 2> argv{"UNSUBSCRIBE", name};
    connection_->command(argv, timeout_, [](const net::ReplyView&) {});
    return;
  }
  const std::string wire = std::move(shard->second);
  shard_of_.erase(shard);
  // Another key's channel may have the same shard channel ("k" and "{k}" both announce on
  // "{k}:released"): it keeps the subscription.
  for (const auto& [other, its_wire] : shard_of_) {
    if (its_wire == wire) return;
  }
  const std::array<std::string_view, 2> argv{
      pubsub_ == Pubsub::sharded ? "SUNSUBSCRIBE" : "UNSUBSCRIBE", wire};
  connection_->command(argv, timeout_, [](const net::ReplyView&) {});
}

void MemberSubscriber::on_message(const redisReply* message) {
  const redisReply* kind = message->element[0];
  const redisReply* channel = message->element[1];
  if (channel->type != REDIS_REPLY_STRING) return;
  const std::string wire(channel->str, channel->len);
  const std::string_view word(kind->str, kind->len);
  const redisReply* payload = message->element[2];
  if (pubsub_ == Pubsub::plain) {
    if (word == "message") hooks_.on_message(wire, payload);
    return;
  }
  // A shard channel: "smessage", "message" on a cluster without sharded pub/sub, or
  // "sunsubscribe" from a node that gave its slot away. Every channel on it hears it.
  std::vector<std::string> names;
  for (const auto& [name, its_wire] : shard_of_) {
    if (its_wire == wire) names.push_back(name);
  }
  for (const auto& name : names) {
    if (word == "sunsubscribe") {
      // Asked again, the cluster routes it to the slot's new owner (MOVED is followed).
      if (hooks_.in_use && hooks_.in_use(name)) send_subscribe(name, nullptr);
      continue;
    }
    // Looked up again: a listener told of the previous name may have dropped this one.
    if (shard_of_.count(name) != 0) hooks_.on_message(name, payload);
  }
}

}  // namespace redlock::detail

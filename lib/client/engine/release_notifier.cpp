#include "client/engine/release_notifier.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <array>
#include <utility>

#include "scripts/election_scripts.hpp"
#include "scripts/lock_scripts.hpp"

namespace redlock::detail {

ReleaseNotifier::ReleaseNotifier(uv_loop_s* loop, std::vector<net::ConnectionOptions> nodes,
                                 int quorum, std::chrono::milliseconds command_timeout,
                                 std::vector<Refused> refused)
    : loop_(loop),
      node_options_(std::move(nodes)),
      quorum_(quorum),
      command_timeout_(command_timeout),
      refused_(std::move(refused)),
      self_(std::make_shared<ReleaseNotifier*>(this)) {
  refused_.resize(node_options_.size());
}

ReleaseNotifier::~ReleaseNotifier() {
  close();
}

void ReleaseNotifier::connect() {
  if (!subscribers_.empty() || closed_) return;
  std::weak_ptr<ReleaseNotifier*> weak = self_;
  for (std::size_t node = 0; node < node_options_.size(); ++node) {
    MemberSubscriber::Hooks hooks;
    hooks.on_message = [weak](const std::string& name, const redisReply* payload) {
      if (auto self = weak.lock()) (*self)->on_message(name, payload);
    };
    hooks.in_use = [weak](const std::string& name) {
      auto self = weak.lock();
      if (!self) return false;
      const auto it = (*self)->channels_.find(name);
      return it != (*self)->channels_.end() && it->second.in_use();
    };
    hooks.for_each_in_use = [weak](const std::function<void(const std::string&)>& renew) {
      auto self = weak.lock();
      if (!self) return;
      for (const auto& [name, channel] : (*self)->channels_) {
        if (channel.in_use()) renew(name);
      }
    };
    hooks.refused = std::move(refused_[node]);
    subscribers_.push_back(std::make_unique<MemberSubscriber>(loop_, node_options_[node],
                                                              command_timeout_, std::move(hooks)));
  }
}

ReleaseNotifier::Watched ReleaseNotifier::watch(const std::string& key,
                                                std::function<void()> on_woken,
                                                std::function<void()> ready) {
  const WaiterId id = next_id_++;
  if (closed_) return {id, true};
  const std::string name = key + scripts::released_suffix;
  Channel& channel = open_channel(key, name);
  channel.queue.join(id);
  channel.on_woken.emplace(id, std::move(on_woken));
  waiter_channels_.emplace(id, name);
  if (channel.ready) return {id, true};
  channel.waiting_for_ready.push_back(std::move(ready));
  return {id, false};
}

ReleaseNotifier::Channel& ReleaseNotifier::open_channel(const std::string& key,
                                                        const std::string& name) {
  connect();
  auto [it, created] = channels_.try_emplace(name);
  Channel& channel = it->second;
  if (!created) return channel;
  channel.generation = next_generation_++;
  channel.key = key;
  for (std::size_t node = 0; node < subscribers_.size(); ++node) subscribe(node, name, true);
  return channel;
}

ReleaseNotifier::ListenerId ReleaseNotifier::listen(const std::string& key,
                                                    std::function<void(bool)> on_release) {
  // From the waiters' sequence: an id is never a waiter's and a listener's both.
  const ListenerId id = next_id_++;
  if (closed_) return id;
  const std::string name = key + scripts::released_suffix;
  open_channel(key, name).listeners.emplace(id, std::move(on_release));
  listener_channels_.emplace(id, name);
  return id;
}

void ReleaseNotifier::unlisten(ListenerId id) {
  auto found = listener_channels_.find(id);
  if (found == listener_channels_.end()) return;
  const std::string name = std::move(found->second);
  listener_channels_.erase(found);
  auto it = channels_.find(name);
  if (it == channels_.end()) return;
  it->second.listeners.erase(id);
  drop_if_unused(it);
}

void ReleaseNotifier::tell_listeners(const Channel& channel, bool elected) {
  if (channel.listeners.empty()) return;
  // Copied: a listener may stop listening from its callback.
  std::vector<std::function<void(bool)>> listeners;
  listeners.reserve(channel.listeners.size());
  for (const auto& [id, listener] : channel.listeners) listeners.push_back(listener);
  for (auto& listener : listeners) listener(elected);
}

bool ReleaseNotifier::others_waiting_before(WaiterId id) {
  Channel* channel = channel_of(id);
  return channel != nullptr && channel->queue.has_waiters_before(id);
}

void ReleaseNotifier::wait_for_turn(WaiterId id) {
  if (Channel* channel = channel_of(id)) channel->queue.wait_for_turn(id);
}

void ReleaseNotifier::subscribe(std::size_t node, const std::string& name, bool count_for_ready) {
  const auto found = channels_.find(name);
  if (found == channels_.end()) return;
  std::function<void(bool)> confirmed;
  if (count_for_ready) {
    std::weak_ptr<ReleaseNotifier*> weak = self_;
    confirmed = [weak, name, generation = found->second.generation](bool ok) {
      auto self = weak.lock();
      if (!self) return;
      auto it = (*self)->channels_.find(name);
      if (it == (*self)->channels_.end() || it->second.generation != generation) return;
      ++(ok ? it->second.confirmed : it->second.failed);
      (*self)->settle(it->second);
    };
  }
  subscribers_[node]->subscribe(found->second.key, name, std::move(confirmed));
}

void ReleaseNotifier::settle(Channel& channel) {
  if (channel.ready) return;
  const int nodes = static_cast<int>(subscribers_.size());
  const int pending = nodes - channel.confirmed - channel.failed;
  if (channel.confirmed < quorum_ && channel.confirmed + pending >= quorum_) return;
  channel.ready = true;
  auto callbacks = std::move(channel.waiting_for_ready);
  channel.waiting_for_ready.clear();
  // `channel` may be erased by a callback (a waiter that finishes at once).
  for (auto& callback : callbacks) callback();
}

ReleaseNotifier::Channel* ReleaseNotifier::channel_of(WaiterId id) {
  auto found = waiter_channels_.find(id);
  if (found == waiter_channels_.end()) return nullptr;
  auto it = channels_.find(found->second);
  return it == channels_.end() ? nullptr : &it->second;
}

void ReleaseNotifier::wake(const std::string& name, std::optional<WaiterId> id) {
  if (!id) return;
  auto it = channels_.find(name);
  if (it == channels_.end()) return;
  auto callback = it->second.on_woken.find(*id);
  if (callback == it->second.on_woken.end()) return;
  // Copied: the waiter may finish at once and unwatch, erasing its callback.
  auto on_woken = callback->second;
  on_woken();
}

void ReleaseNotifier::attempt_started(WaiterId id) {
  if (Channel* channel = channel_of(id)) channel->queue.attempt_started(id);
}

bool ReleaseNotifier::attempt_failed(WaiterId id, bool holder_seen) {
  Channel* channel = channel_of(id);
  if (channel == nullptr) return false;
  const auto after = channel->queue.attempt_failed(id, holder_seen);
  wake(waiter_channels_.at(id), after.wake);
  return after.retry_now;
}

bool ReleaseNotifier::announced_released(WaiterId id, std::string_view holder) {
  Channel* channel = channel_of(id);
  if (channel == nullptr || holder.empty()) return false;
  const auto& recent = channel->recent_releases;
  return std::find(recent.begin(), recent.end(), holder) != recent.end();
}

void ReleaseNotifier::unwatch(WaiterId id, bool acquired) {
  auto found = waiter_channels_.find(id);
  if (found == waiter_channels_.end()) return;
  const std::string name = std::move(found->second);
  waiter_channels_.erase(found);
  auto it = channels_.find(name);
  if (it == channels_.end()) return;
  const auto passed_to = it->second.queue.leave(id, acquired);
  it->second.on_woken.erase(id);
  if (!it->second.queue.empty() || !it->second.waiting_for_ready.empty())
    return wake(name, passed_to);
  drop_if_unused(it);
}

void ReleaseNotifier::drop_if_unused(std::unordered_map<std::string, Channel>::iterator it) {
  if (it->second.in_use() || !it->second.waiting_for_ready.empty()) return;
  const std::string name = it->first;
  channels_.erase(it);
  if (closed_) return;
  for (auto& subscriber : subscribers_) subscriber->unsubscribe(name);
}

void ReleaseNotifier::on_message(const std::string& name, const redisReply* payload) {
  if (payload->type != REDIS_REPLY_STRING) {
    // Not a value our release script publishes; still a reason to look at the key.
    auto it = channels_.find(name);
    if (it == channels_.end()) return;
    tell_listeners(it->second, false);
    // Looked up again: a listener may have dropped the channel.
    it = channels_.find(name);
    if (it != channels_.end()) wake(it->first, it->second.queue.announce());
    return;
  }
  const std::string_view text(payload->str, payload->len);
  if (text.substr(0, scripts::campaign_announcement.size()) == scripts::campaign_announcement) {
    // A new leader, not a release: only observers care, and each member announces it.
    auto it = channels_.find(name);
    if (it != channels_.end()) tell_listeners(it->second, true);
    return;
  }
  announce(name, std::string(text));
}

void ReleaseNotifier::released_locally(const std::string& key, const std::string& value) {
  announce(key + scripts::released_suffix, value);
}

void ReleaseNotifier::announce(const std::string& channel_name, std::string released) {
  auto it = channels_.find(channel_name);
  if (it == channels_.end()) return;
  Channel& channel = it->second;
  if (std::find(channel.recent_releases.begin(), channel.recent_releases.end(), released) !=
      channel.recent_releases.end()) {
    return;
  }
  channel.recent_releases[channel.next_release_at] = std::move(released);
  channel.next_release_at = (channel.next_release_at + 1) % channel.recent_releases.size();
  tell_listeners(channel, false);
  // Looked up again: a listener may have dropped the channel.
  it = channels_.find(channel_name);
  if (it != channels_.end()) wake(it->first, it->second.queue.announce());
}

void ReleaseNotifier::close() {
  if (closed_) return;
  closed_ = true;
  self_.reset();
  subscribers_.clear();  // each closes its connection
  auto channels = std::move(channels_);
  channels_.clear();
  for (auto& [name, channel] : channels) {
    for (auto& callback : channel.waiting_for_ready) callback();
  }
}

}  // namespace redlock::detail

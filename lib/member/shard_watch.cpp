#include "member/shard_watch.hpp"

#include <utility>

namespace redlock::detail {

void ShardWatch::on_shard(net::Connection& shard, const std::string& address,
                          net::ShardEvent event) {
  if (event == net::ShardEvent::met || event == net::ShardEvent::appeared) {
    shards_.push_back(Shard{&shard, address, event == net::ShardEvent::appeared, true, nullptr});
    if (rules_) watch(shards_.back());
    return;
  }
  for (auto& known : shards_) {
    if (known.connection != &shard) continue;
    if (event != net::ShardEvent::ready) known.owns = event == net::ShardEvent::regained;
    if (event != net::ShardEvent::left && known.watch) known.watch->ready(shard);
  }
}

void ShardWatch::start(const MemberStart::Rules& rules) {
  rules_ = rules;
  for (auto& shard : shards_) watch(shard);
}

void ShardWatch::watch(Shard& shard) {
  MemberStart::Rules rules = *rules_;
  rules.who = "shard " + shard.address + ": ";
  shard.watch = std::make_unique<MemberWatch>(std::move(rules), timeout_);
  if (shard.appeared) {
    shard.watch->appeared(*shard.connection);
  } else {
    shard.watch->ask(*shard.connection);
  }
}

std::span<const core::ServerGuard> ShardWatch::server_guards() const {
  server_guards_.resize(shards_.size());
  for (std::size_t i = 0; i < shards_.size(); ++i) {
    const Shard& shard = shards_[i];
    server_guards_[i] =
        shard.watch ? core::ServerGuard{&shard.watch->guard(), shard.owns, shard.watch->silent()}
                    : core::ServerGuard{};
  }
  return server_guards_;
}

const core::MemberGuard& ShardWatch::guard() const noexcept {
  core::guard_of_grant(server_guards(), core::unknown_server, combined_);
  return combined_;
}

const core::MemberGuard* ShardWatch::guard_for(const net::Connection* server) const {
  for (std::size_t i = 0; i < shards_.size(); ++i) {
    if (shards_[i].connection != server) continue;
    core::guard_of_grant(server_guards(), i, *shards_[i].of_grant);
    return shards_[i].of_grant.get();
  }
  return &guard();
}

}  // namespace redlock::detail

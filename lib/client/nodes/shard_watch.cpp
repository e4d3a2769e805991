#include "client/nodes/shard_watch.hpp"

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

const core::MemberGuard& ShardWatch::guard() const noexcept {
  const core::MemberGuard* chosen = nullptr;
  for (const auto& shard : shards_) {
    if (!shard.watch || !shard.owns) continue;
    const auto& one = shard.watch->guard();
    if (!one.known || !one.same_server_as.empty()) {
      chosen = &one;
      break;
    }
    if (chosen == nullptr || one.until > chosen->until) chosen = &one;
  }
  if (chosen == nullptr) {
    combined_ = {};
    return combined_;
  }
  return *chosen;
}

}  // namespace redlock::detail

#include "member/shard_watch.hpp"

namespace redlock::detail {

void ShardWatch::on_shard(net::Connection& shard, const std::string& address,
                          net::ShardEvent event) {
  const auto now = core::Clock::now();
  if (event == net::ShardEvent::met || event == net::ShardEvent::appeared) {
    const auto id =
        event == net::ShardEvent::appeared ? lives_.appeared(address, now) : lives_.met(address);
    shards_.push_back(Shard{&shard, id, nullptr});
    watch(shards_.back());
    return;
  }
  for (auto& known : shards_) {
    if (known.connection != &shard) continue;
    if (event == net::ShardEvent::left) {
      lives_.left(known.id);
      continue;
    }
    if (event == net::ShardEvent::regained) {
      lives_.regained(known.id, now);
    } else {
      lives_.ready(known.id, now);
    }
    if (known.watch) known.watch->ask(shard);
  }
}

void ShardWatch::start(const core::MemberLife::Rules& rules) {
  lives_.start(rules, core::Clock::now());
  for (auto& shard : shards_) watch(shard);
}

void ShardWatch::watch(Shard& shard) {
  auto* life = lives_.life(shard.id);
  if (life == nullptr) return;
  shard.watch = std::make_unique<MemberWatch>(*life, timeout_);
  shard.watch->ask(*shard.connection);
}

const core::MemberGuard* ShardWatch::guard_for(const net::Connection* server) const {
  for (const auto& shard : shards_) {
    if (shard.connection == server) return &lives_.guard_for(shard.id);
  }
  return &guard();
}

}  // namespace redlock::detail

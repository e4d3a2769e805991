#include "core/sharded_member_life.hpp"

#include <utility>

namespace redlock::core {

ShardedMemberLife::Shard ShardedMemberLife::met(std::string address) {
  return add(std::move(address), false, Clock::time_point{});
}

ShardedMemberLife::Shard ShardedMemberLife::appeared(std::string address, Clock::time_point now) {
  return add(std::move(address), true, now);
}

ShardedMemberLife::Shard ShardedMemberLife::add(std::string address, bool appeared,
                                                Clock::time_point now) {
  masters_.push_back(Master{std::move(address), appeared});
  if (rules_) start_life(masters_.back(), now);
  return masters_.size() - 1;
}

void ShardedMemberLife::ready(Shard shard, Clock::time_point now) {
  if (auto* life = this->life(shard)) life->connected(now);
}

void ShardedMemberLife::left(Shard shard) {
  masters_.at(shard).owns = false;
}

void ShardedMemberLife::regained(Shard shard, Clock::time_point now) {
  masters_.at(shard).owns = true;
  ready(shard, now);
}

void ShardedMemberLife::start(const MemberLife::Rules& rules, Clock::time_point now) {
  rules_ = rules;
  for (auto& master : masters_) start_life(master, now);
}

void ShardedMemberLife::start_life(Master& master, Clock::time_point now) {
  MemberLife::Rules rules = *rules_;
  rules.who = "shard " + master.address + ": ";
  master.life = std::make_unique<MemberLife>(std::move(rules));
  if (master.appeared) master.life->appeared(now);
}

MemberLife* ShardedMemberLife::life(Shard shard) noexcept {
  return shard < masters_.size() ? masters_[shard].life.get() : nullptr;
}

std::span<const ServerGuard> ShardedMemberLife::server_guards() const {
  server_guards_.resize(masters_.size());
  for (std::size_t i = 0; i < masters_.size(); ++i) {
    const Master& master = masters_[i];
    server_guards_[i] = master.life
                            ? ServerGuard{&master.life->guard(), master.owns, master.life->silent()}
                            : ServerGuard{};
  }
  return server_guards_;
}

const MemberGuard& ShardedMemberLife::guard() const noexcept {
  guard_of_grant(server_guards(), unknown_server, combined_);
  return combined_;
}

const MemberGuard& ShardedMemberLife::guard_for(Shard shard) const {
  MemberGuard& out = *masters_.at(shard).of_grant;
  guard_of_grant(server_guards(), shard, out);
  return out;
}

}  // namespace redlock::core

// A Redis Cluster: its keys spread over shard masters by slot, which the connection's
// router follows (net/cluster_router.hpp). What a key names beside it (its fencing
// counter, its release channel, an election's record) is placed in the key's slot; a
// release is announced on the key's shard alone (SPUBLISH); a key set runs one script per
// slot (key_set_parts.hpp); and each shard master's life guards the grants it gives
// (shard_watch.hpp), the others' only as far as a slot may move to it.

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "member/key_set_parts.hpp"
#include "member/member_kind.hpp"
#include "member/shard_watch.hpp"
#include "net/cluster_slot.hpp"
#include "scripts/lock_scripts.hpp"

namespace redlock::detail {

namespace {

class ClusterMember final : public MemberKind {
 public:
  explicit ClusterMember(std::chrono::milliseconds timeout) : shards_(timeout) {}

  // The router tells of the shard masters from its first (synchronous) start on.
  void configure(net::ConnectionOptions& options, std::function<void()> servers_back) override {
    options.on_shard = [this, servers_back = std::move(servers_back)](net::Connection& shard,
                                                                      const std::string& address,
                                                                      net::ShardEvent event) {
      shards_.on_shard(shard, address, event);
      if (event == net::ShardEvent::ready) servers_back();
    };
  }

  // Keys that cannot be named so are refused before any command (KeyPlacement).
  std::string companion_key(std::string_view key, std::string_view suffix) const override {
    return net::slot_companion(key, suffix).value_or(MemberKind::companion_key(key, suffix));
  }

  std::string_view announce_argument(Announce announce) const noexcept override {
    return announce == Announce::no ? "0" : "s";
  }

  // The last channel named is kept, in storage reused: a round releases one key on every
  // member.
  std::string_view release_channel(std::string_view key) const override {
    thread_local struct {
      bool named = false;
      std::string key;
      std::string channel;
    } last;
    if (!last.named || last.key != key) {
      if (!net::assign_slot_companion(last.channel, key, scripts::released_suffix)) {
        last.channel.assign(key).append(scripts::released_suffix);
      }
      last.key.assign(key);
      last.named = true;
    }
    return last.channel;
  }

  bool announces_by_shard() const noexcept override { return true; }

  void run_key_set(Node& node, std::span<const std::string> keys, const KeySetScript& script,
                   std::chrono::milliseconds timeout, ReplyReader read,
                   NodeCallback done) override {
    run_key_set_by_slot(node, keys, script, timeout, read, std::move(done));
  }

  // Its shards' masters: "shards 10.0.0.7:7000, 10.0.0.8:7000".
  std::string serving(const net::Connection& connection) const override {
    return connection.where();
  }

  void watch_start(core::MemberLife::Rules rules, net::Connection*,
                   std::chrono::milliseconds) override {
    shards_.start(rules);
  }
  void ready(net::Connection&) override {}
  const core::MemberGuard& guard() const noexcept override { return shards_.guard(); }
  const core::MemberGuard* guard_of(const net::ReplyView& view) const override {
    return shards_.guard_for(view.server);
  }

 private:
  ShardWatch shards_;
};

}  // namespace

std::unique_ptr<MemberKind> make_cluster_member(std::chrono::milliseconds timeout) {
  return std::make_unique<ClusterMember>(timeout);
}

}  // namespace redlock::detail

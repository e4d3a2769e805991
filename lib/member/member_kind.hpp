#pragma once
// What is particular to one kind of member, chosen once from its URL: one Redis server
// (server_member.hpp), a Sentinel group (sentinel_member.cpp) or a Redis Cluster
// (cluster_member.cpp). Where the names kept beside a key go, how a release is announced
// and a key set is run, whose life guards a grant, and how the member names the server it
// talks to. The node (node.cpp) holds one and is otherwise the same for every kind: it
// sends the commands, the kind decides what a command names and what an answer counts.

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "core/member_guard.hpp"
#include "core/member_life.hpp"
#include "member/node.hpp"
#include "net/connection.hpp"

namespace redlock::detail {

class MemberKind {
 public:
  virtual ~MemberKind() = default;

  /// Sets the kind's own callbacks on the options of the member's connection before it is
  /// made. `servers_back`: the kind tells of a server of the member whose connection is
  /// ready again beyond the connection's own on_ready (a cluster's shard master), so that
  /// releases lost with it are sent again.
  virtual void configure(net::ConnectionOptions& options, std::function<void()> servers_back) {
    (void)options;
    (void)servers_back;
  }
  /// Node::companion_key: key + suffix.
  virtual std::string companion_key(std::string_view key, std::string_view suffix) const;
  /// Node::announce_argument: "0", or "1" (PUBLISH to every subscriber).
  virtual std::string_view announce_argument(Announce announce) const noexcept {
    return announce == Announce::no ? "0" : "1";
  }
  /// The channel an announced release of `key` is published on where it is not
  /// "<key>:released" to every subscriber; empty for that. Valid until the next call on
  /// this thread.
  virtual std::string_view release_channel(std::string_view key) const {
    (void)key;
    return {};
  }
  /// Whether a waiter hears this member's announcements on the channel release_channel()
  /// names by a sharded subscription (SSUBSCRIBE, where the key's shard alone publishes)
  /// rather than a plain one.
  virtual bool announces_by_shard() const noexcept { return false; }
  /// Node::run_key_set for `node`: in one script, Node::run_key_set's default.
  virtual void run_key_set(Node& node, std::span<const std::string> keys,
                           const KeySetScript& script, std::chrono::milliseconds timeout,
                           ReplyReader read, NodeCallback done);
  /// Node::serving: empty for a member that is one fixed server.
  virtual std::string serving(const net::Connection& connection) const {
    (void)connection;
    return {};
  }

  /// Node::watch_start, with the member's connection (null once closed) and how long an
  /// INFO may take.
  virtual void watch_start(core::MemberLife::Rules rules, net::Connection* connection,
                           std::chrono::milliseconds timeout) = 0;
  /// The member's connection became ready.
  virtual void ready(net::Connection& connection) = 0;
  /// Node::guard.
  virtual const core::MemberGuard& guard() const noexcept = 0;
  /// The guard of a grant the server `view` came from gave, where the member has several
  /// servers; null: the member's, guard().
  virtual const core::MemberGuard* guard_of(const net::ReplyView& view) const {
    (void)view;
    return nullptr;
  }
};

/// The kind `endpoint` names; `timeout`: how long an INFO may take.
std::unique_ptr<MemberKind> make_member_kind(const net::Endpoint& endpoint,
                                             std::chrono::milliseconds timeout);

}  // namespace redlock::detail

#include "member/member_kind.hpp"

#include <utility>

#include "member/server_member.hpp"

namespace redlock::detail {

// Defined beside their kinds (sentinel_member.cpp, cluster_member.cpp).
std::unique_ptr<MemberKind> make_sentinel_member();
std::unique_ptr<MemberKind> make_cluster_member(std::chrono::milliseconds timeout);

std::string MemberKind::companion_key(std::string_view key, std::string_view suffix) const {
  return std::string(key).append(suffix);
}

void MemberKind::run_key_set(Node& node, std::span<const std::string> keys,
                             const KeySetScript& script, std::chrono::milliseconds timeout,
                             ReplyReader read, NodeCallback done) {
  node.Node::run_key_set(keys, script, timeout, read, std::move(done));
}

std::unique_ptr<MemberKind> make_member_kind(const net::Endpoint& endpoint,
                                             std::chrono::milliseconds timeout) {
  if (endpoint.is_cluster()) return make_cluster_member(timeout);
  if (endpoint.is_sentinel_group()) return make_sentinel_member();
  return std::make_unique<ServerMember>();
}

}  // namespace redlock::detail

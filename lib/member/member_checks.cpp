#include "member/member_checks.hpp"

#include <algorithm>
#include <cctype>

#include "net/cluster_slot.hpp"

namespace redlock::detail {

namespace {

// "a:1,b:2": the addresses' identities, sorted.
std::string address_set(const std::vector<net::SentinelAddress>& addresses) {
  std::vector<std::string> names;
  for (const auto& one : addresses) {
    net::Endpoint address;
    address.host = one.host;
    address.port = one.port;
    names.push_back(member_identity(address));
  }
  std::sort(names.begin(), names.end());
  std::string set;
  for (const auto& name : names) set += (set.empty() ? "" : ",") + name;
  return set;
}

}  // namespace

std::string member_identity(const net::Endpoint& endpoint) {
  // Two URLs that reach the same server are one node, however spelled. The database is
  // left out: two databases of one server fail together (a restart without fsync loses
  // both votes at once), so they are not independent masters. Host names compare
  // without case; resolving them here would block, so a name and an address of the
  // same server still count as two (docs/errors.md).
  if (endpoint.scheme == net::Scheme::unix_socket) return "unix:" + endpoint.path;
  if (endpoint.is_sentinel_group()) {
    // The same name watched by the same sentinels is one group, however listed.
    return "sentinel:" + endpoint.master_name + "," + address_set(endpoint.sentinels);
  }
  // The same seeds are one cluster, however listed. Other seeds of the same cluster are
  // not recognised: that would take asking it (docs/errors.md).
  if (endpoint.is_cluster()) return "cluster:" + address_set(endpoint.cluster_seeds);
  std::string host;
  for (char c : endpoint.host) {
    host += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return host + ":" + std::to_string(endpoint.port);
}

// A Sentinel group has two masters for a while after a failover (the old one is demoted
// only when the sentinels reach it, never while it is cut off from them but not from some
// clients), and the group may then grant one key to two clients, one on each master. Two
// majorities of N share one member, so that single double vote breaks exclusion with
// every other member healthy (docs/safety.md, "Sentinel groups"). A fleet must close it
// one way or another, or say that its servers do (min-replicas-to-write).
namespace {

std::optional<std::string> two_masters_problem(const std::vector<std::string>& sentinel_members,
                                               const Options& options, int quorum) {
  if (sentinel_members.empty() || options.member_guard.allow_two_masters) return std::nullopt;
  if (options.member_guard.replicas_to_ack > 0) return std::nullopt;
  const int nodes = static_cast<int>(options.nodes.size());
  if (2 * quorum >= nodes + 2) return std::nullopt;
  const int absorbing = (nodes + 3) / 2;
  std::string quorum_remedy = absorbing <= nodes ? "quorum " + std::to_string(absorbing) +
                                                       " (two quorums then share two members), "
                                                 : "";
  return "nodes: Sentinel group " + sentinel_members.front() +
         " may have two masters at once after a failover, and one member voting twice breaks "
         "a majority of " +
         std::to_string(nodes) +
         ": set member_guard.replicas_to_ack to the number of replicas of each group, or " +
         quorum_remedy +
         "or, with min-replicas-to-write on the servers, member_guard.allow_two_masters "
         "(docs/safety.md, \"Sentinel groups\")";
}

}  // namespace

std::optional<std::string> member_kind_problem(const std::vector<net::Endpoint>& endpoints,
                                               const Options& options, int quorum) {
  std::vector<std::string> sentinel_members;
  for (const auto& endpoint : endpoints) {
    if (endpoint.is_sentinel_group()) sentinel_members.push_back(endpoint.display);
    if (endpoint.is_cluster() && options.member_guard.replicas_to_ack > 0) {
      // WAIT counts the replicas of the connection's own last write: on a cluster the write
      // went to its slot's master, possibly after a redirection, which a WAIT sent beside
      // it does not follow; its count would be another shard's, or a write's that never was.
      return "member_guard.replicas_to_ack: not supported with cluster member " + endpoint.display +
             ": its WAIT would not follow each write to the shard that took it; leave it 0 (a "
             "shard that fails over is guarded: member_guard.observed_restarts)";
    }
  }
  return two_masters_problem(sentinel_members, options, quorum);
}

KeyPlacement::KeyPlacement(const std::vector<net::Endpoint>& endpoints) {
  for (const auto& endpoint : endpoints) {
    if (endpoint.is_cluster()) {
      strict_member_ = endpoint.display;
      return;
    }
  }
}

std::optional<std::string> KeyPlacement::problem(std::string_view key) const {
  if (strict_member_.empty() || net::has_slot_companion(key)) return std::nullopt;
  return "cannot be placed on cluster member " + strict_member_ +
         ": it has no hash tag and holds a '}', so no name beside it (its fencing counter) can "
         "share its slot; give it a hash tag, e.g. '{orders}:42'";
}

}  // namespace redlock::detail

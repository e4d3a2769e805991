#include "runner/chaos_cluster.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

namespace redlock::chaos {
namespace {

bool contains(const std::vector<std::size_t>& list, std::size_t node) {
  return std::find(list.begin(), list.end(), node) != list.end();
}

// REPLICAOF through `link`, then waits (up to 5 s) for the full sync to finish.
void replicate(test::RedisServer& replica, const FaultProxy& link) {
  replica.command({"REPLICAOF", "127.0.0.1", std::to_string(link.port())});
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (replica.command({"INFO", "replication"}).str.find("master_link_status:up") ==
             std::string::npos &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace

ChaosCluster::ChaosCluster(const ClusterSettings& settings, const std::string& dir,
                           const std::string& fake_clock_library)
    : settings_(settings), dir_(dir), fake_clock_library_(fake_clock_library) {
  store_ = std::make_unique<test::RedisServer>();
  test::RedisServerOptions options;
  options.appendonly_always = settings.appendonly;
  test::RedisServerOptions replicated = options;
  // A replica's full sync at once, not after the default 5 s wait for more replicas.
  replicated.extra_args = {"--repl-diskless-sync-delay", "0"};
  replicas_.resize(settings.nodes);
  links_.resize(settings.nodes);
  second_proxies_.resize(settings.nodes);
  split_.resize(settings.nodes);
  groups_.resize(settings.nodes);
  clusters_.resize(settings.nodes);
  // The fixtures' servers take these after their own persistence settings, which they
  // override: a killed server keeps every write it acknowledged.
  const std::vector<std::string> aof_args = {"--appendonly", "yes", "--appendfsync", "always"};
  for (std::size_t i = 0; i < settings.nodes; ++i) {
    if (kind(i) != MemberKind::standalone) {
      if (has_fake_clock(i) || contains(settings.replicated_nodes, i)) {
        throw std::logic_error(
            "node " + std::to_string(i) +
            " is a Sentinel group or cluster: no fake clock, no proxied replica");
      }
      const MemberSettings& member = settings.members[i];
      if (member.kind == MemberKind::sentinel_group) {
        test::SentinelGroupOptions group;
        group.master_name = "member" + std::to_string(i);
        group.replicas = member.replicas;
        group.sentinels = member.sentinels;
        group.quorum = member.sentinels / 2 + 1;
        if (settings.appendonly) group.server_args = aof_args;
        groups_[i] = std::make_unique<test::SentinelGroup>(group);
      } else {
        test::ShardedClusterOptions cluster;
        cluster.shards = member.shards;
        cluster.replicas_per_shard = member.replicas_per_shard;
        if (settings.appendonly) cluster.server_args = aof_args;
        clusters_[i] = std::make_unique<test::ShardedCluster>(cluster);
      }
      nodes_.push_back(nullptr);
      proxies_.push_back(nullptr);
      continue;
    }
    if (has_fake_clock(i)) set_clock(i, 0, 1.0);
    if (contains(settings.replicated_nodes, i)) {
      if (has_fake_clock(i)) {
        throw std::logic_error("node " + std::to_string(i) +
                               " cannot be both replicated and under the fake clock");
      }
      nodes_.push_back(std::make_unique<test::RedisServer>(replicated));
      replicas_[i] = std::make_unique<test::RedisServer>(replicated);
      links_[i] = std::make_unique<FaultProxy>("127.0.0.1", nodes_.back()->port());
      replicate(*replicas_[i], *links_[i]);
    } else {
      nodes_.push_back(start(i, options));
    }
    proxies_.push_back(std::make_unique<FaultProxy>("127.0.0.1", nodes_.back()->port()));
    if (replicas_[i]) {
      second_proxies_[i] = std::make_unique<FaultProxy>("127.0.0.1", nodes_.back()->port());
    }
  }
}

void ChaosCluster::pause_replication(std::size_t node) {
  replication_link(node).set_mode(ProxyMode::partition);
}

void ChaosCluster::fail_over(const std::vector<std::size_t>& nodes) {
  for (std::size_t node : nodes) {
    replication_link(node);
    replicas_[node]->command({"REPLICAOF", "NO", "ONE"});
  }
  for (std::size_t node : nodes) {
    proxies_.at(node)->retarget("127.0.0.1", replicas_[node]->port());
    second_proxies_[node]->retarget("127.0.0.1", replicas_[node]->port());
    std::swap(nodes_[node], replicas_[node]);
  }
  for (std::size_t node : nodes) {
    links_[node]->retarget("127.0.0.1", nodes_[node]->port());
    links_[node]->set_mode(ProxyMode::pass);
    replicate(*replicas_[node], *links_[node]);
  }
}

void ChaosCluster::split(std::size_t node) {
  replication_link(node);
  if (split_.at(node)) throw std::logic_error("node " + std::to_string(node) + " is split already");
  split_[node] = true;
  replicas_[node]->command({"REPLICAOF", "NO", "ONE"});
  second_proxies_[node]->retarget("127.0.0.1", replicas_[node]->port());
}

void ChaosCluster::heal(std::size_t node) {
  replication_link(node);
  if (!split_.at(node)) throw std::logic_error("node " + std::to_string(node) + " is not split");
  split_[node] = false;
  // The clients leave the old master before it is demoted, so that none of them meets it
  // as a replica (READONLY) in between.
  proxies_[node]->retarget("127.0.0.1", replicas_[node]->port());
  std::swap(nodes_[node], replicas_[node]);
  links_[node]->retarget("127.0.0.1", nodes_[node]->port());
  links_[node]->set_mode(ProxyMode::pass);
  replicate(*replicas_[node], *links_[node]);
}

std::string ChaosCluster::second_url(std::size_t node) const {
  if (!second_proxies_.at(node)) {
    throw std::logic_error("node " + std::to_string(node) + " has no replica");
  }
  return "redis://127.0.0.1:" + std::to_string(second_proxies_[node]->port());
}

FaultProxy& ChaosCluster::replication_link(std::size_t node) {
  if (!links_.at(node)) throw std::logic_error("node " + std::to_string(node) + " has no replica");
  return *links_[node];
}

ChaosCluster::~ChaosCluster() = default;

std::vector<std::string> ChaosCluster::urls() const {
  std::vector<std::string> urls;
  for (std::size_t i = 0; i < proxies_.size(); ++i) {
    if (groups_[i]) {
      urls.push_back(groups_[i]->url());
    } else if (clusters_[i]) {
      urls.push_back(clusters_[i]->url());
    } else {
      urls.push_back("redis://127.0.0.1:" + std::to_string(proxies_[i]->port()));
    }
  }
  return urls;
}

FaultProxy& ChaosCluster::proxy(std::size_t node) {
  if (!proxies_.at(node)) {
    throw std::logic_error("node " + std::to_string(node) + " is reached without a proxy");
  }
  return *proxies_[node];
}

test::SentinelGroup& ChaosCluster::sentinel_group(std::size_t node) {
  if (!groups_.at(node)) {
    throw std::logic_error("node " + std::to_string(node) + " is not a Sentinel group");
  }
  return *groups_[node];
}

test::ShardedCluster& ChaosCluster::redis_cluster(std::size_t node) {
  if (!clusters_.at(node)) {
    throw std::logic_error("node " + std::to_string(node) + " is not a Redis Cluster");
  }
  return *clusters_[node];
}

test::RedisServer& ChaosCluster::node(std::size_t node) {
  if (groups_.at(node)) return groups_[node]->master();
  return standalone(node);
}

test::RedisServer& ChaosCluster::standalone(std::size_t node) {
  if (!nodes_.at(node)) {
    throw std::logic_error("node " + std::to_string(node) + " is not a standalone master");
  }
  return *nodes_[node];
}

MemberKind ChaosCluster::kind(std::size_t node) const {
  return node < settings_.members.size() ? settings_.members[node].kind : MemberKind::standalone;
}

std::unique_ptr<test::RedisServer> ChaosCluster::start(std::size_t node,
                                                       const test::RedisServerOptions& options) {
  if (!has_fake_clock(node)) return std::make_unique<test::RedisServer>(options);
  // The server's own environment, kept for its restarts; no other child sees it.
  test::RedisServerOptions preloaded = options;
  preloaded.environment = {"LD_PRELOAD=" + fake_clock_library_,
                           "REDLOCK_FAKECLOCK_FILE=" + clock_file(node)};
  return std::make_unique<test::RedisServer>(preloaded);
}

void ChaosCluster::kill9(std::size_t node) {
  standalone(node).kill9();
}

void ChaosCluster::restart(std::size_t node) {
  standalone(node).restart();
}

void ChaosCluster::set_clock(std::size_t node, long long offset_ms, double rate) {
  if (!has_fake_clock(node)) {
    throw std::logic_error("node " + std::to_string(node) + " does not run under the fake clock");
  }
  // Renamed over the old file: the library notices a new inode even within one tick.
  const std::string path = clock_file(node);
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    char rate_text[32];
    std::snprintf(rate_text, sizeof rate_text, "%.6f", rate);
    out << offset_ms << " " << rate_text << "\n";
  }
  std::filesystem::rename(tmp, path);
}

bool ChaosCluster::has_fake_clock(std::size_t node) const {
  return contains(settings_.fake_clock_nodes, node);
}

std::string ChaosCluster::clock_file(std::size_t node) const {
  return dir_ + "/clock-" + std::to_string(node);
}

}  // namespace redlock::chaos

#include "sentinel_group.hpp"

#include <hiredis/hiredis.h>

#include <stdexcept>
#include <thread>

namespace redlock::testing::detail {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto form_timeout = 20s;

std::string field(const std::string& info, const std::string& name) {
  const std::string key = name + ":";
  std::size_t at = info.find(key);
  if (at == std::string::npos) return {};
  at += key.size();
  return info.substr(at, info.find('\r', at) - at);
}

// SENTINEL REPLICAS answers one flat array [name, value, ...] per replica.
std::string replica_field(const Reply& replica, const std::string& name) {
  for (std::size_t i = 0; i + 1 < replica.elements.size(); i += 2) {
    if (replica.elements[i].str == name) return replica.elements[i + 1].str;
  }
  return {};
}

}  // namespace

Reply SentinelGroup::ask(RedisServer& server, std::vector<std::string> argv) {
  try {
    return server.command(argv);
  } catch (const std::runtime_error&) {
    // A failover ends with the sentinels closing every client connection of the servers
    // they reconfigure, the fixture's own included; the next call opens a new one.
    return server.command(std::move(argv));
  }
}

SentinelGroup::SentinelGroup(SentinelGroupOptions options) : options_(std::move(options)) {
  // Every data server may become the master; none makes its replicas wait the default
  // five seconds for a diskless full sync.
  RedisServerOptions data;
  data.appendonly_always = options_.persistence;
  data.extra_args = {"--repl-diskless-sync-delay", "0"};
  data.tls_only = options_.tls;
  if (options_.tls) data.extra_args.insert(data.extra_args.end(), {"--tls-replication", "yes"});
  data.extra_args.insert(data.extra_args.end(), options_.server_args.begin(),
                         options_.server_args.end());
  auto in = [&](RedisServerOptions server, const std::string& name) {
    if (!options_.dir.empty()) server.dir = options_.dir + "/" + name;
    return server;
  };
  servers_.push_back(std::make_unique<RedisServer>(in(data, "server-0")));
  const std::string master_port = std::to_string(servers_[0]->port());
  for (std::size_t i = 0; i < options_.replicas; ++i) {
    RedisServerOptions replica = data;
    replica.extra_args.insert(replica.extra_args.end(), {"--replicaof", "127.0.0.1", master_port});
    servers_.push_back(
        std::make_unique<RedisServer>(in(replica, "server-" + std::to_string(i + 1))));
  }
  wait_replicas_online();
  for (std::size_t i = 0; i < options_.sentinels; ++i) {
    RedisServerOptions sentinel;
    sentinel.sentinel_config = sentinel_config();
    sentinel.password = options_.sentinel_password;
    sentinel.tls_only = options_.tls;
    if (options_.tls) sentinel.extra_args = {"--tls-replication", "yes"};
    sentinel.extra_args.insert(sentinel.extra_args.end(), options_.sentinel_args.begin(),
                               options_.sentinel_args.end());
    sentinels_.push_back(
        std::make_unique<RedisServer>(in(sentinel, "sentinel-" + std::to_string(i))));
  }
  wait_sentinels_ready();
}

std::string SentinelGroup::sentinel_config() const {
  const std::string& name = options_.master_name;
  return "sentinel monitor " + name + " 127.0.0.1 " + std::to_string(servers_[0]->port()) + " " +
         std::to_string(options_.quorum) + "\n" + "sentinel down-after-milliseconds " + name + " " +
         std::to_string(options_.down_after_ms) + "\n" + "sentinel failover-timeout " + name + " " +
         std::to_string(options_.failover_timeout_ms) + "\n" + "sentinel parallel-syncs " + name +
         " 1\n" +
         (options_.sentinel_password.empty()
              ? std::string()
              : "sentinel sentinel-pass " + options_.sentinel_password + "\n");
}

void SentinelGroup::wait_replicas_online() {
  const auto deadline = Clock::now() + form_timeout;
  const std::string expected = std::to_string(options_.replicas);
  while (Clock::now() < deadline) {
    Reply info = ask(*servers_[0], {"INFO", "replication"});
    if (field(info.str, "connected_slaves") == expected) {
      bool synced = true;
      for (std::size_t i = 1; i < servers_.size(); ++i) {
        Reply replica = ask(*servers_[i], {"INFO", "replication"});
        synced = synced && field(replica.str, "master_link_status") == "up";
      }
      if (synced) return;
    }
    std::this_thread::sleep_for(20ms);
  }
  throw std::runtime_error("replicas did not come online: " + servers_[0]->log_tail());
}

void SentinelGroup::wait_sentinels_ready() {
  const auto deadline = Clock::now() + form_timeout;
  for (auto& sentinel : sentinels_) {
    for (;;) {
      Reply replicas = ask(*sentinel, {"SENTINEL", "REPLICAS", options_.master_name});
      std::size_t online = 0;
      for (const Reply& replica : replicas.elements) {
        if (replica_field(replica, "flags") == "slave" &&
            replica_field(replica, "master-link-status") == "ok") {
          ++online;
        }
      }
      if (online == options_.replicas) break;
      if (Clock::now() >= deadline) {
        throw std::runtime_error("sentinel did not learn the replicas: " + sentinel->log_tail());
      }
      std::this_thread::sleep_for(20ms);
    }
  }
}

std::string SentinelGroup::url() const {
  std::string url = options_.tls ? "rediss-sentinel://" : "redis-sentinel://";
  for (std::size_t i = 0; i < sentinels_.size(); ++i) {
    if (i > 0) url += ',';
    url += "127.0.0.1:" + std::to_string(sentinels_[i]->port());
  }
  return url + "/" + options_.master_name;
}

std::uint16_t SentinelGroup::named_master_port() {
  for (auto& sentinel : sentinels_) {
    if (!sentinel->running() || sentinel->paused()) continue;
    Reply address = ask(*sentinel, {"SENTINEL", "GET-MASTER-ADDR-BY-NAME", options_.master_name});
    if (address.elements.size() == 2) {
      return static_cast<std::uint16_t>(std::stoi(address.elements[1].str));
    }
  }
  throw std::runtime_error("no sentinel names a master for " + options_.master_name);
}

RedisServer& SentinelGroup::master() {
  const std::uint16_t port = named_master_port();
  for (auto& server : servers_) {
    if (server->port() == port) return *server;
  }
  throw std::runtime_error("the sentinels name port " + std::to_string(port) +
                           ", which is not in the group");
}

std::uint16_t SentinelGroup::failover(Until until, std::chrono::milliseconds limit) {
  const std::uint16_t before = named_master_port();
  Reply reply = ask(*sentinels_.at(0), {"SENTINEL", "FAILOVER", options_.master_name});
  if (reply.is_error()) throw std::runtime_error("SENTINEL FAILOVER refused: " + reply.str);
  return wait_for_new_master(before, until, limit);
}

std::uint16_t SentinelGroup::wait_for_new_master(std::uint16_t before, Until until,
                                                 std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    std::this_thread::sleep_for(20ms);
    bool agreed = true;
    std::uint16_t named = 0;
    for (auto& sentinel : sentinels_) {
      Reply address = ask(*sentinel, {"SENTINEL", "GET-MASTER-ADDR-BY-NAME", options_.master_name});
      if (address.elements.size() != 2) {
        agreed = false;
        break;
      }
      auto port = static_cast<std::uint16_t>(std::stoi(address.elements[1].str));
      if (port == before || (named != 0 && port != named)) agreed = false;
      named = port;
    }
    if (!agreed) continue;
    bool promoted = false;
    bool demoted = false;
    for (auto& server : servers_) {
      if (server->port() != named && server->port() != before) continue;
      if (!server->running()) {
        demoted = true;  // a killed master is demoted when it comes back
        continue;
      }
      Reply role = ask(*server, {"ROLE"});
      const std::string name = role.elements.empty() ? "" : role.elements[0].str;
      if (server->port() == named) promoted = name == "master";
      if (server->port() == before) demoted = name == "slave";
    }
    if (promoted && (demoted || until == Until::switched)) return named;
  }
  throw std::runtime_error("failover of " + options_.master_name +
                           " did not complete: " + sentinels_.at(0)->log_tail());
}

}  // namespace redlock::testing::detail

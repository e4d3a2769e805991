#include "sharded_cluster.hpp"

#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <thread>

#include <redlock/testing/redis_binary.hpp>

namespace redlock::testing::detail {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr auto form_timeout = 20s;

// Runs `command` through the shell; returns its exit status and output.
int run_shell(const std::string& command, std::string& output) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed for: " + command);
  char buffer[4096];
  std::size_t read = 0;
  while ((read = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, read);
  return ::pclose(pipe);
}

Reply checked(RedisServer& server, std::vector<std::string> argv) {
  const std::string what = argv.empty() ? std::string() : argv[0] + " " + argv[1];
  Reply reply = server.command(std::move(argv));
  if (reply.is_error()) {
    throw std::runtime_error(what + " on port " + std::to_string(server.port()) + ": " + reply.str);
  }
  return reply;
}

// CLUSTER SLOTS: the port of the master of `slot`, or 0.
std::uint16_t master_port(const Reply& slots, std::uint16_t slot) {
  for (const Reply& range : slots.elements) {
    if (range.elements.size() < 3) continue;
    if (range.elements[0].integer <= slot && slot <= range.elements[1].integer) {
      return static_cast<std::uint16_t>(range.elements[2].elements.at(1).integer);
    }
  }
  return 0;
}

}  // namespace

ShardedCluster::ShardedCluster(ShardedClusterOptions options) : options_(options) {
  const std::string cli = redis_cli_binary();
  RedisServerOptions node;
  node.cluster = true;
  node.appendonly_always = options_.persistence;
  node.extra_args = {"--repl-diskless-sync-delay", "0", "--cluster-node-timeout", "2000"};
  node.tls_only = options_.tls;
  node.extra_args.insert(node.extra_args.end(), options_.server_args.begin(),
                         options_.server_args.end());
  std::string command = cli;
  if (options_.tls) {
    node.extra_args.insert(node.extra_args.end(),
                           {"--tls-cluster", "yes", "--tls-replication", "yes"});
    const TestCertificates& certificates = test_certificates();
    command += " --tls --cacert " + certificates.ca_cert + " --cert " + certificates.client_cert +
               " --key " + certificates.client_key;
  }
  const std::size_t count = options_.shards * (1 + options_.replicas_per_shard);
  command += " --cluster create";
  for (std::size_t i = 0; i < count; ++i) {
    if (!options_.dir.empty()) node.dir = options_.dir + "/server-" + std::to_string(i);
    servers_.push_back(std::make_unique<RedisServer>(node));
    command += " 127.0.0.1:" + std::to_string(servers_.back()->port());
  }
  command +=
      " --cluster-replicas " + std::to_string(options_.replicas_per_shard) + " --cluster-yes";
  std::string output;
  if (run_shell(command, output) != 0) {
    throw std::runtime_error("redis-cli --cluster create failed:\n" + output);
  }
  wait_consistent();
}

std::string ShardedCluster::url() const {
  std::string url = options_.tls ? "rediss-cluster://" : "redis-cluster://";
  for (std::size_t i = 0; i < servers_.size(); ++i) {
    url += (i == 0 ? "" : ",") + std::string("127.0.0.1:") + std::to_string(servers_[i]->port());
  }
  return url;
}

void ShardedCluster::wait_consistent() {
  const auto give_up = Clock::now() + form_timeout;
  std::string why;
  while (Clock::now() < give_up) {
    why.clear();
    Reply first;
    for (std::size_t i = 0; i < servers_.size() && why.empty(); ++i) {
      const Reply info = servers_[i]->command({"CLUSTER", "INFO"});
      if (info.str.find("cluster_state:ok") == std::string::npos) {
        why = "port " + std::to_string(servers_[i]->port()) + " is not cluster_state:ok";
        break;
      }
      Reply slots = servers_[i]->command({"CLUSTER", "SLOTS"});
      for (std::uint16_t slot = 0; i > 0 && slot < 16384 && why.empty(); slot += 64) {
        if (master_port(slots, slot) != master_port(first, slot)) {
          why = "servers disagree on slot " + std::to_string(slot);
        }
      }
      if (i == 0) first = std::move(slots);
    }
    if (why.empty()) return;
    std::this_thread::sleep_for(20ms);
  }
  std::string logs;
  for (const auto& server : servers_) logs += "\n" + server->log_tail(5);
  throw std::runtime_error("the cluster did not become consistent within 20 s: " + why + logs);
}

std::string ShardedCluster::node_id(RedisServer& server) {
  return checked(server, {"CLUSTER", "MYID"}).str;
}

RedisServer& ShardedCluster::owner_of_slot(std::uint16_t slot) {
  // A TLS-only cluster names its TLS ports to the fixture's unix socket too.
  const std::uint16_t port = master_port(checked(*servers_[0], {"CLUSTER", "SLOTS"}), slot);
  for (const auto& server : servers_) {
    if (server->port() == port) return *server;
  }
  throw std::runtime_error("no server owns slot " + std::to_string(slot));
}

RedisServer& ShardedCluster::owner_of(const std::string& key) {
  return owner_of_slot(
      static_cast<std::uint16_t>(checked(*servers_[0], {"CLUSTER", "KEYSLOT", key}).integer));
}

void ShardedCluster::begin_migration(std::uint16_t slot, RedisServer& to) {
  RedisServer& from = owner_of_slot(slot);
  const std::string slot_text = std::to_string(slot);
  checked(to, {"CLUSTER", "SETSLOT", slot_text, "IMPORTING", node_id(from)});
  checked(from, {"CLUSTER", "SETSLOT", slot_text, "MIGRATING", node_id(to)});
}

void ShardedCluster::move_slot(std::uint16_t slot, RedisServer& to) {
  RedisServer* from = &owner_of_slot(slot);
  begin_migration(slot, to);
  const std::string slot_text = std::to_string(slot);
  for (;;) {
    const Reply keys = checked(*from, {"CLUSTER", "GETKEYSINSLOT", slot_text, "100"});
    if (keys.elements.empty()) break;
    std::vector<std::string> migrate = {"MIGRATE", "127.0.0.1", std::to_string(to.port()), "", "0",
                                        "5000",    "KEYS"};
    for (const Reply& key : keys.elements) migrate.push_back(key.str);
    checked(*from, migrate);
  }
  const std::string to_id = node_id(to);
  // The importing side first, as redis-cli does, so that no moment has no owner.
  checked(to, {"CLUSTER", "SETSLOT", slot_text, "NODE", to_id});
  checked(*from, {"CLUSTER", "SETSLOT", slot_text, "NODE", to_id});
  for (const auto& server : servers_) {
    // Replicas refuse SETSLOT; they learn the owner from their masters' gossip.
    if (server.get() != &to && server.get() != from &&
        server->command({"ROLE"}).elements.at(0).str == "master") {
      checked(*server, {"CLUSTER", "SETSLOT", slot_text, "NODE", to_id});
    }
  }
  wait_consistent();
}

RedisServer& ShardedCluster::replica_of(RedisServer& master) {
  for (const auto& server : servers_) {
    const Reply role = server->command({"ROLE"});
    // A replica's ROLE: slave, its master's host, its master's port, ...
    if (role.elements.size() >= 3 && role.elements[0].str == "slave" &&
        role.elements[2].integer == master.port()) {
      return *server;
    }
  }
  throw std::runtime_error("no replica of port " + std::to_string(master.port()));
}

void ShardedCluster::fail_over_to(RedisServer& replica) {
  const auto give_up = Clock::now() + form_timeout;
  const std::string id = node_id(replica);
  auto fail = [&](const std::string& why) {
    throw std::runtime_error("port " + std::to_string(replica.port()) + " " + why +
                             " within 20 s:\n" + replica.log_tail(10));
  };
  // The masters vote for a replica they know as one: a cluster just formed may not yet
  // have told them all, and a manual failover then times out.
  for (;;) {
    bool known = true;
    for (const auto& server : servers_) {
      const std::string nodes = server->command({"CLUSTER", "NODES"}).str;
      const auto line = nodes.find(id);
      known = known && line != std::string::npos &&
              nodes.substr(line, nodes.find('\n', line) - line).find("slave") != std::string::npos;
    }
    if (known && replica.command({"INFO", "replication"}).str.find("master_link_status:up") !=
                     std::string::npos) {
      break;
    }
    if (Clock::now() > give_up) fail("was not known as a replica everywhere");
    std::this_thread::sleep_for(20ms);
  }
  // A manual failover that times out (5 s) is asked again.
  while (replica.command({"ROLE"}).elements.at(0).str != "master") {
    checked(replica, {"CLUSTER", "FAILOVER"});
    const auto retry = Clock::now() + 6s;
    while (replica.command({"ROLE"}).elements.at(0).str != "master" && Clock::now() < retry) {
      std::this_thread::sleep_for(5ms);
    }
    if (Clock::now() > give_up) fail("did not become a master");
  }
  wait_consistent();
}

}  // namespace redlock::testing::detail

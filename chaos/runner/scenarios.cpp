// The scenario catalogue. Times are fractions of the run's duration, so the short mode
// (ctest) and a soak run share one definition.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runner/scenario.hpp"

namespace redlock::chaos {
namespace {

milliseconds at_fraction(milliseconds duration, double fraction) {
  return milliseconds(static_cast<long long>(static_cast<double>(duration.count()) * fraction));
}

std::string list(const std::vector<std::size_t>& nodes) {
  std::string text;
  for (std::size_t n : nodes) text += (text.empty() ? "" : ",") + std::to_string(n);
  return text;
}

Action set_mode(milliseconds at, std::vector<std::size_t> nodes, ProxyMode mode) {
  return {at, "mode " + std::string(to_string(mode)) + " on nodes " + list(nodes),
          [nodes, mode](ScenarioContext& c) {
            for (std::size_t n : nodes) c.cluster.proxy(n).set_mode(mode);
          }};
}

Action set_latency(milliseconds at, std::size_t node, milliseconds up, milliseconds down) {
  return {at,
          "latency up " + std::to_string(up.count()) + " down " + std::to_string(down.count()) +
              " on node " + std::to_string(node),
          [=](ScenarioContext& c) {
            c.cluster.proxy(node).set_latency(Direction::up, up);
            c.cluster.proxy(node).set_latency(Direction::down, down);
          }};
}

// Actions at from, from + period, ... while before `to`; `make(i, at)` builds the i-th.
template <typename Make>
void every(std::vector<Action>& out, milliseconds from, milliseconds to, milliseconds period,
           Make make) {
  int i = 0;
  for (milliseconds at = from; at < to; at += period) out.push_back(make(i++, at));
}

// Nodes 0, 1 and 2 killed with -9 and restarted at once: without persistence, each
// forgets every lock it held.
Action restart_three(milliseconds at) {
  return Action{at, "kill -9 and restart nodes 0,1,2", [](ScenarioContext& c) {
                  for (std::size_t n : {0, 1, 2}) c.cluster.kill9(n);
                  for (std::size_t n : {0, 1, 2}) c.cluster.restart(n);
                  // On a loaded machine a restart can outlast the period, and back-to-back
                  // restarts would leave the nodes down until the end: nobody could take a
                  // forgotten lock. Let them serve first.
                  std::this_thread::sleep_for(milliseconds(300));
                }};
}

// Nodes 0, 1 and 2 (each with a replica) fail over to replicas that missed every write
// since `lag` before: the replication links are cut, and `lag` later the replicas are
// promoted and the clients moved to them. Locks taken in between live on the old
// masters only.
// Repeated every `period` over the middle of a run of `duration`.
std::vector<Action> fail_over_three(milliseconds duration, milliseconds period, milliseconds lag) {
  std::vector<Action> out;
  for (milliseconds at = at_fraction(duration, 0.15); at < at_fraction(duration, 0.8);
       at += period) {
    out.push_back({at, "replication links of nodes 0,1,2 cut", [](ScenarioContext& c) {
                     for (std::size_t n : {0, 1, 2}) c.cluster.pause_replication(n);
                   }});
    out.push_back({at + lag, "replicas of nodes 0,1,2 promoted, clients moved to them",
                   [](ScenarioContext& c) {
                     c.cluster.fail_over({0, 1, 2});
                   }});
  }
  return out;
}

ClusterSettings replicated_three() {
  ClusterSettings cluster;
  cluster.replicated_nodes = {0, 1, 2};
  return cluster;
}

// Node 0 gets two masters for `split`, again and again: its replica is promoted and the
// workers that reach node 0 through its second proxy are moved to it, while those on the
// first proxy stay on the old master, which goes on granting as a master (the sentinels
// could not reach it to demote it, or those clients missed +switch-master). Then the old
// master is demoted to the new one's replica and every client moved to the new master;
// `healed` later the next round begins, with the roles of the two servers swapped.
std::vector<Action> two_masters(milliseconds duration, milliseconds split, milliseconds healed) {
  std::vector<Action> out;
  for (milliseconds at = at_fraction(duration, 0.1); at + split <= at_fraction(duration, 0.85);
       at += split + healed) {
    out.push_back({at,
                   "node 0 split: its replica promoted and the second proxy moved to it, the "
                   "old master still a master behind the first",
                   [](ScenarioContext& c) { c.cluster.split(0); }});
    out.push_back({at + split,
                   "node 0 healed: the first proxy moved to the new master, the old one "
                   "demoted to its replica",
                   [](ScenarioContext& c) { c.cluster.heal(0); }});
  }
  return out;
}

// A node that drops in and out of reach: some locks are then taken on a bare quorum that
// excludes it, which is what lets a fault on two other nodes matter (in-model by itself).
void flapping(std::vector<Action>& out, std::size_t node, milliseconds duration,
              milliseconds period) {
  every(out, milliseconds(0), at_fraction(duration, 0.85), period, [&](int i, milliseconds at) {
    return set_mode(at, {node}, i % 2 == 0 ? ProxyMode::partition : ProxyMode::pass);
  });
  out.push_back(set_mode(at_fraction(duration, 0.85), {node}, ProxyMode::pass));
}

// Long holds on few keys with many waiters: whenever exclusion breaks, someone is ready
// to walk in while the holder still holds.
WorkerSettings contended() {
  WorkerSettings w;
  w.keys = 3;
  w.ttl = milliseconds(3000);
  w.wait = milliseconds(3000);
  w.hold = milliseconds(400);
  return w;
}

// contended(), every primitive on a single key: a lock forgotten by three nodes is broken
// only by an attempt that starts while its holder still holds (waiters sleep until a
// release), and spread over several keys of five primitives such attempts come too
// seldom for a short run to be sure to see one.
WorkerSettings contended_on_one_key() {
  WorkerSettings w = contended();
  w.keys = 1;
  return w;
}

// Each worker process misses another minority of the nodes: {3,4}, {0,1} and {2}. Every
// holder of a majority still shares a node with every other, but a permit of K = 2
// granted by 3 nodes need not: A on 0-2, B on 2-4 and C on 0,1,3,4 leave no node with
// more than two (docs/kinds.md, the quorum proof).
WorkerSettings split_views() {
  WorkerSettings w;
  w.unreachable = {{3, 4}, {0, 1}, {2}};
  return w;
}

// Two groups of clients that can only ever agree through node 0: worker 0 misses nodes
// 3 and 4 and worker 1 nodes 1 and 2, so each holder's quorum is all three nodes it sees
// and two holders meet on node 0 alone (in model, as split_views). Worker 1 reaches node
// 0 through its second proxy, so while node 0 is split the two workers are granted by
// different masters of it. One key, ttl 1 s as in the failover scenarios, short holds
// for many acquisitions between splits.
WorkerSettings split_clients() {
  WorkerSettings w = contended_on_one_key();
  w.processes = 2;
  w.ttl = milliseconds(1000);
  w.wait = milliseconds(1000);
  w.hold = milliseconds(100);
  w.unreachable = {{3, 4}, {1, 2}};
  w.second_proxy = {{}, {0}};
  return w;
}

// Sentinel groups and clusters as members. No proxy can stand in front of them (they
// announce their servers' own addresses), so their faults are the processes' own.

using SteadyClock = std::chrono::steady_clock;

ClusterSettings members_of(MemberSettings member, std::size_t count) {
  ClusterSettings cluster;
  cluster.nodes = count;
  cluster.members.assign(count, member);
  // Every kill below restarts at once: an fsync'd AOF keeps what was acknowledged, the
  // fencing counters too, so token order stays in the model.
  cluster.appendonly = true;
  return cluster;
}

MemberSettings sentinel_group_member() {
  MemberSettings member;
  member.kind = MemberKind::sentinel_group;
  member.replicas = 1;
  member.sentinels = 3;
  return member;
}

MemberSettings cluster_member() {
  MemberSettings member;
  member.kind = MemberKind::redis_cluster;
  member.shards = 3;
  member.replicas_per_shard = 1;
  return member;
}

bool has_online_replica(test::RedisServer& master) {
  try {
    const std::string info = test::SentinelGroup::ask(master, {"INFO", "replication"}).str;
    return info.find("connected_slaves:0") == std::string::npos &&
           info.find("state=online") != std::string::npos;
  } catch (const std::runtime_error&) {
    return false;
  }
}

// Each fault on a group waits for the group to be whole again: the sentinels refuse a
// failover with no replica in sync, and with replicas_to_ack 1 a group whose master has
// no replica counts for nobody, so back-to-back faults would only take it out longer.
void await_replica(test::SentinelGroup& group) {
  const auto until = SteadyClock::now() + std::chrono::seconds(15);
  while (SteadyClock::now() < until) {
    try {
      if (has_online_replica(group.master())) return;
    } catch (const std::runtime_error&) {
      // No sentinel names a master while a failover is under way.
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
}

// A master the sentinels replaced comes back a master; they demote it only when their
// periodic INFO finds it one (about ten seconds), and until then the new master has no
// replica. Demote it now, as they will: nothing but timing changes.
void rejoin(test::SentinelGroup& group, test::RedisServer& old_master) {
  const std::uint16_t named = group.named_master_port();
  if (named == old_master.port()) return;
  const test::Reply role = test::SentinelGroup::ask(old_master, {"ROLE"});
  if (!role.elements.empty() && role.elements[0].str == "master") {
    test::SentinelGroup::ask(old_master, {"REPLICAOF", "127.0.0.1", std::to_string(named)});
  }
}

// SENTINEL FAILOVER, asked again while the sentinels refuse it (a replica not yet seen
// in sync, a failover of their own under way).
void sentinel_failover(ScenarioContext& c, std::size_t member) {
  test::SentinelGroup& group = c.cluster.sentinel_group(member);
  await_replica(group);
  test::RedisServer& old_master = group.master();
  const auto until = SteadyClock::now() + std::chrono::seconds(10);
  for (;;) {
    try {
      group.failover(test::SentinelGroup::Until::switched, std::chrono::seconds(10));
      break;
    } catch (const std::runtime_error&) {
      if (SteadyClock::now() > until) throw;
      std::this_thread::sleep_for(milliseconds(200));
    }
  }
  rejoin(group, old_master);
}

// The master SIGSTOPped for `pause`, longer than the sentinels' down-after (500 ms): they
// fail it over while it holds grants, and it wakes up a master beside the promoted one.
void pause_group_master(std::vector<Action>& out, milliseconds at, std::size_t member,
                        milliseconds pause) {
  auto paused = std::make_shared<test::RedisServer*>(nullptr);
  out.push_back({at,
                 "SIGSTOP the master of member " + std::to_string(member) +
                     " (Sentinel group) for " + std::to_string(pause.count()) + " ms",
                 [member, paused](ScenarioContext& c) {
                   test::SentinelGroup& group = c.cluster.sentinel_group(member);
                   await_replica(group);
                   *paused = &group.master();
                   (*paused)->pause();
                 }});
  out.push_back({at + pause, "SIGCONT the old master of member " + std::to_string(member),
                 [member, paused](ScenarioContext& c) {
                   if (*paused == nullptr) return;
                   (*paused)->resume();
                   // Once the sentinels switched (they may still be at it), demote it.
                   test::SentinelGroup& group = c.cluster.sentinel_group(member);
                   const auto until = SteadyClock::now() + std::chrono::seconds(3);
                   while (SteadyClock::now() < until) {
                     try {
                       if (group.named_master_port() != (*paused)->port()) {
                         rejoin(group, **paused);
                         return;
                       }
                     } catch (const std::runtime_error&) {
                     }
                     std::this_thread::sleep_for(milliseconds(50));
                   }
                 }});
}

// kill -9 of the master, restarted (its AOF) only once the sentinels promoted the
// replica: a server restarts with its first command line, and a former replica's names
// its first master, which is the group's master only after that failover.
void kill_group_master(ScenarioContext& c, std::size_t member) {
  test::SentinelGroup& group = c.cluster.sentinel_group(member);
  await_replica(group);
  test::RedisServer& master = group.master();
  const std::uint16_t port = master.port();
  master.kill9();
  try {
    group.wait_for_new_master(port, test::SentinelGroup::Until::switched, std::chrono::seconds(20));
  } catch (const std::runtime_error&) {
    master.restart();  // not left dead for the rest of the run
    throw;
  }
  master.restart();
  rejoin(group, master);
}

// The one replica of a group.
test::RedisServer& replica_of(test::SentinelGroup& group) {
  test::RedisServer& master = group.master();
  for (std::size_t i = 0; i < group.servers(); ++i) {
    if (&group.server(i) != &master) return group.server(i);
  }
  throw std::logic_error("a Sentinel group without a replica");
}

// Asks only the sentinels: the old master may be paused.
void await_switch(test::SentinelGroup& group, std::uint16_t before) {
  const auto until = SteadyClock::now() + std::chrono::seconds(20);
  while (SteadyClock::now() < until) {
    try {
      if (group.named_master_port() != before) return;
    } catch (const std::runtime_error&) {
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
  throw std::runtime_error("the sentinels of " + group.master_name() +
                           " did not fail over within 20 s");
}

// SENTINEL FAILOVER, asked again while refused (a failover of their own under way does
// as well), for up to 5 s.
void request_failover(test::SentinelGroup& group) {
  const auto until = SteadyClock::now() + std::chrono::seconds(5);
  for (;;) {
    const test::Reply reply =
        test::SentinelGroup::ask(group.sentinel(0), {"SENTINEL", "FAILOVER", group.master_name()});
    if (!reply.is_error() || reply.str.find("INPROG") != std::string::npos ||
        SteadyClock::now() > until) {
      return;
    }
    std::this_thread::sleep_for(milliseconds(50));
  }
}

// A loopback port where nothing listens (bound, never listening: connections are
// refused), while this lives.
class RefusingPort {
 public:
  RefusingPort() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
      throw std::runtime_error("cannot reserve a loopback port");
    }
    port_ = ntohs(address.sin_port);
  }
  ~RefusingPort() { ::close(fd_); }
  RefusingPort(const RefusingPort&) = delete;
  RefusingPort& operator=(const RefusingPort&) = delete;
  std::uint16_t port() const { return port_; }

 private:
  int fd_;
  std::uint16_t port_ = 0;
};

// Groups that fail over to replicas missing every write of the last `lag`: each replica's
// link is cut (it is pointed at a port that refuses it, as a partition between the two
// would: a SIGSTOPped replica would find every write waiting in its socket when it
// resumes), the masters go on granting; then the masters are SIGSTOPped and the replicas
// promoted. Once every group switched the old masters are resumed and follow the new
// ones, their data replaced by a full sync. A failover to a lagging replica on a real
// group; several groups at once, so that the grants they lose can add up to a quorum.
void lagging_failover(std::vector<Action>& out, milliseconds at,
                      const std::vector<std::size_t>& members, milliseconds lag) {
  using Pair = std::pair<test::RedisServer*, test::RedisServer*>;  // master, replica
  auto servers = std::make_shared<std::vector<Pair>>();
  auto nowhere = std::make_shared<RefusingPort>();
  out.push_back({at,
                 "the replication links of members " + list(members) +
                     " (Sentinel groups) cut: their replicas miss every write from now",
                 [members, servers, nowhere](ScenarioContext& c) {
                   servers->clear();
                   // Every group whole first, then every link cut at once: the sentinels
                   // promote no replica whose link has been down for over 10 x down-after
                   // (5 s), so the cuts must not wait on each other.
                   for (std::size_t m : members) await_replica(c.cluster.sentinel_group(m));
                   for (std::size_t m : members) {
                     test::SentinelGroup& group = c.cluster.sentinel_group(m);
                     servers->emplace_back(&group.master(), &replica_of(group));
                   }
                   for (const auto& [master, replica] : *servers) {
                     test::SentinelGroup::ask(
                         *replica, {"REPLICAOF", "127.0.0.1", std::to_string(nowhere->port())});
                   }
                 }});
  out.push_back({at + lag,
                 "the masters of members " + list(members) + " SIGSTOPped and their replicas, " +
                     std::to_string(lag.count()) + " ms behind, promoted (SENTINEL FAILOVER)",
                 [members, servers](ScenarioContext& c) {
                   for (const auto& [master, replica] : *servers) master->pause();
                   // Asked for, rather than left to the sentinels' down-after and vote:
                   // the failover then takes about a second instead of two, and the
                   // holders it overtakes need hold no longer than that.
                   for (std::size_t m : members) request_failover(c.cluster.sentinel_group(m));
                   std::string failed;
                   for (std::size_t i = 0; i < servers->size(); ++i) {
                     try {
                       await_switch(c.cluster.sentinel_group(members[i]),
                                    (*servers)[i].first->port());
                     } catch (const std::runtime_error& error) {
                       failed += std::string(failed.empty() ? "" : "; ") + error.what();
                     }
                   }
                   for (std::size_t i = 0; i < servers->size(); ++i) {
                     const auto& [master, replica] = (*servers)[i];
                     test::SentinelGroup& group = c.cluster.sentinel_group(members[i]);
                     master->resume();
                     if (group.named_master_port() == master->port()) {
                       // Not failed over: the replica follows its master again.
                       test::SentinelGroup::ask(
                           *replica, {"REPLICAOF", "127.0.0.1", std::to_string(master->port())});
                     } else {
                       rejoin(group, *master);
                     }
                   }
                   if (!failed.empty()) throw std::runtime_error(failed);
                 }});
}

// Every `period` one fault, the members in turn: a SENTINEL FAILOVER, the master paused
// past the TTL (and the sentinels' down-after: they fail it over), the master killed and
// restarted after their failover, and with four members or more, a failover of four
// groups at once to replicas that missed every write of the last two seconds (four, so
// that three of them, a quorum, have switched before the slowest).
std::vector<Action> sentinel_group_faults(milliseconds d, const WorkerSettings& w,
                                          const std::vector<std::size_t>& members,
                                          milliseconds period) {
  std::vector<Action> out;
  const int kinds = members.size() >= 4 ? 4 : 3;
  every(out, at_fraction(d, 0.05), at_fraction(d, 0.85), period, [&](int i, milliseconds at) {
    const auto member = [&](int k) {
      return members[static_cast<std::size_t>(i + k) % members.size()];
    };
    const std::size_t m = member(0);
    switch (i % kinds) {
      case 0:
        return Action{at, "SENTINEL FAILOVER of member " + std::to_string(m),
                      [m](ScenarioContext& c) { sentinel_failover(c, m); }};
      case 1: {
        std::vector<Action> pause;
        pause_group_master(pause, at, m, w.ttl + milliseconds(500));
        out.push_back(pause[1]);
        return pause[0];
      }
      case 2:
        return Action{at,
                      "kill -9 the master of member " + std::to_string(m) +
                          ", restarted (AOF) after the sentinels' failover",
                      [m](ScenarioContext& c) { kill_group_master(c, m); }};
      default: {
        std::vector<Action> lagging;
        lagging_failover(lagging, at, {m, member(1), member(2), member(3)}, milliseconds(2000));
        out.push_back(lagging[1]);
        return lagging[0];
      }
    }
  });
  return out;
}

// The master of a cluster member's shard that holds `key` now.
test::RedisServer& shard_of(ScenarioContext& c, std::size_t member, const std::string& key) {
  return c.cluster.redis_cluster(member).owner_of(c.key_prefix + key);
}

// Moves `key`'s slot, with its keys, to another running master of the cluster.
void move_slot_of(ScenarioContext& c, std::size_t member, const std::string& key) {
  test::ShardedCluster& cluster = c.cluster.redis_cluster(member);
  test::RedisServer& owner = cluster.owner_of(c.key_prefix + key);
  const auto slot =
      static_cast<std::uint16_t>(owner.command({"CLUSTER", "KEYSLOT", c.key_prefix + key}).integer);
  for (std::size_t i = 0; i < cluster.servers(); ++i) {
    test::RedisServer& server = cluster.server(i);
    if (&server == &owner || !server.running() || server.paused()) continue;
    const test::Reply role = server.command({"ROLE"});
    if (!role.elements.empty() && role.elements[0].str == "master") {
      cluster.move_slot(slot, server);
      return;
    }
  }
  throw std::runtime_error("no other master to move slot " + std::to_string(slot) + " to");
}

// Every `period` one fault on one cluster member, the members in turn, aimed at the
// shard of a contended key: its master paused past the TTL (and short of
// cluster-node-timeout, 2 s, so the cluster does not fail it over: it wakes up and grants
// again), its master killed and restarted with its AOF, CLUSTER FAILOVER to its replica,
// its slot moved to another master while the workers contend for it.
std::vector<Action> cluster_faults(milliseconds d, const WorkerSettings& w,
                                   const std::vector<std::size_t>& members, milliseconds period) {
  std::vector<Action> out;
  const std::vector<std::string> keys = {"0", "rw:0", "1"};
  every(out, at_fraction(d, 0.05), at_fraction(d, 0.85), period, [&](int i, milliseconds at) {
    const std::size_t m = members[static_cast<std::size_t>(i) % members.size()];
    const std::string key = keys[static_cast<std::size_t>(i) % keys.size()];
    const std::string shard = " the shard of " + key + " on member " + std::to_string(m);
    switch (i % 4) {
      case 0: {
        const milliseconds pause = w.ttl + milliseconds(300);
        auto paused = std::make_shared<test::RedisServer*>(nullptr);
        out.push_back({at + pause, "SIGCONT" + shard, [paused](ScenarioContext&) {
                         if (*paused != nullptr) (*paused)->resume();
                       }});
        return Action{
            at, "SIGSTOP the master of" + shard + " for " + std::to_string(pause.count()) + " ms",
            [m, key, paused](ScenarioContext& c) {
              *paused = &shard_of(c, m, key);
              (*paused)->pause();
            }};
      }
      case 1:
        return Action{at, "kill -9 and restart (AOF) the master of" + shard,
                      [m, key](ScenarioContext& c) { shard_of(c, m, key).restart(); }};
      case 2:
        return Action{at, "CLUSTER FAILOVER of" + shard + " to its replica",
                      [m, key](ScenarioContext& c) {
                        test::ShardedCluster& cluster = c.cluster.redis_cluster(m);
                        cluster.fail_over_to(cluster.replica_of(shard_of(c, m, key)));
                      }};
      default:
        return Action{
            at, "slot of " + key + " on member " + std::to_string(m) + " moved to another master",
            [m, key](ScenarioContext& c) { move_slot_of(c, m, key); }};
    }
  });
  return out;
}

}  // namespace

std::vector<Scenario> all_scenarios() {
  std::vector<Scenario> s;

  s.push_back(
      {"baseline", "no faults", true, false, {}, {}, [](milliseconds, const WorkerSettings&) {
         return std::vector<Action>{};
       }});

  s.push_back({"minority_partitioned",
               "nodes 3 and 4 partitioned both ways",
               true,
               false,
               {},
               {},
               [](milliseconds d, const WorkerSettings&) {
                 return std::vector<Action>{
                     set_mode(at_fraction(d, 0.1), {3, 4}, ProxyMode::partition),
                     set_mode(at_fraction(d, 0.9), {3, 4}, ProxyMode::pass)};
               }});

  s.push_back({"majority_partitioned_healed",
               "nodes 0, 1 and 2 partitioned for 30% of the run, then healed",
               true,
               false,
               {},
               {},
               [](milliseconds d, const WorkerSettings&) {
                 return std::vector<Action>{
                     set_mode(at_fraction(d, 0.25), {0, 1, 2}, ProxyMode::partition),
                     set_mode(at_fraction(d, 0.55), {0, 1, 2}, ProxyMode::pass)};
               }});

  s.push_back({"replies_lost_two",
               "nodes 0 and 1 apply every request but their replies are lost",
               true,
               false,
               {},
               {},
               [](milliseconds d, const WorkerSettings&) {
                 return std::vector<Action>{
                     set_mode(at_fraction(d, 0.1), {0, 1}, ProxyMode::drop_replies),
                     set_mode(at_fraction(d, 0.9), {0, 1}, ProxyMode::pass)};
               }});

  s.push_back({"one_node_slow",
               "node 0 answers 200 ms late (beyond the node timeout)",
               true,
               false,
               {},
               {},
               [](milliseconds d, const WorkerSettings&) {
                 return std::vector<Action>{
                     set_latency(milliseconds(0), 0, milliseconds(100), milliseconds(100)),
                     set_latency(at_fraction(d, 0.9), 0, milliseconds(0), milliseconds(0))};
               }});

  {
    WorkerSettings mixed;
    mixed.threads = 2;
    mixed.foreign_threads = 2;
    mixed.keys = 1;
    s.push_back({"foreign_client",
                 "each worker also runs two plain SET NX clients that never announce a release, "
                 "all on one key; node 1 is SIGSTOPped for 30% of the run",
                 true,
                 false,
                 {},
                 mixed,
                 [](milliseconds d, const WorkerSettings&) {
                   return std::vector<Action>{
                       {at_fraction(d, 0.4), "SIGSTOP node 1",
                        [](ScenarioContext& c) { c.cluster.node(1).pause(); }},
                       {at_fraction(d, 0.7), "SIGCONT node 1",
                        [](ScenarioContext& c) { c.cluster.node(1).resume(); }}};
                 }});
  }

  s.push_back({"node_paused",
               "node 0 is SIGSTOPped for 40% of the run",
               true,
               false,
               {},
               {},
               [](milliseconds d, const WorkerSettings&) {
                 return std::vector<Action>{
                     {at_fraction(d, 0.2), "SIGSTOP node 0",
                      [](ScenarioContext& c) { c.cluster.node(0).pause(); }},
                     {at_fraction(d, 0.6), "SIGCONT node 0",
                      [](ScenarioContext& c) { c.cluster.node(0).resume(); }}};
               }});

  {
    ClusterSettings aof;
    aof.appendonly = true;
    s.push_back({"rolling_kill_aof",
                 "each node in turn killed with -9 and restarted at once, with fsync'd AOF",
                 true,
                 false,
                 aof,
                 {},
                 [](milliseconds d, const WorkerSettings&) {
                   std::vector<Action> out;
                   every(out, at_fraction(d, 0.1), at_fraction(d, 0.85), at_fraction(d, 0.12),
                         [](int i, milliseconds at) {
                           const std::size_t n = static_cast<std::size_t>(i) % 5;
                           return Action{at, "kill -9 and restart node " + std::to_string(n),
                                         [n](ScenarioContext& c) {
                                           c.cluster.kill9(n);
                                           c.cluster.restart(n);
                                         }};
                         });
                   return out;
                 }});
  }

  s.push_back({"rolling_restart_delayed",
               "each node in turn killed with -9, without persistence, and restarted only "
               "after the max TTL",
               true,
               false,
               {},
               {},
               [](milliseconds d, const WorkerSettings& w) {
                 std::vector<Action> out;
                 const milliseconds delay = w.ttl + milliseconds(200);
                 every(out, at_fraction(d, 0.05), at_fraction(d, 0.85) - delay,
                       delay + milliseconds(100), [&](int i, milliseconds at) {
                         const std::size_t n = static_cast<std::size_t>(i) % 5;
                         out.push_back({at + delay, "restart node " + std::to_string(n),
                                        [n](ScenarioContext& c) { c.cluster.restart(n); }});
                         return Action{at, "kill -9 node " + std::to_string(n),
                                       [n](ScenarioContext& c) { c.cluster.kill9(n); }};
                       });
                 return out;
               }});

  {
    WorkerSettings stalling;
    stalling.stall_every = 4;
    s.push_back({"client_stalls",
                 "holders stall past their validity mid-critical-section (in-process, and one "
                 "worker SIGSTOPped), then write with their old token",
                 true,
                 false,
                 {},
                 stalling,
                 [](milliseconds d, const WorkerSettings& w) {
                   return std::vector<Action>{
                       {at_fraction(d, 0.3), "SIGSTOP worker 0",
                        [](ScenarioContext& c) { c.workers.at(0).pause(); }},
                       {at_fraction(d, 0.3) + 2 * w.ttl, "SIGCONT worker 0",
                        [](ScenarioContext& c) { c.workers.at(0).resume(); }}};
                 }});
  }

  s.push_back({"split_views",
               "each worker process misses another minority of the nodes ({3,4}, {0,1}, {2}) "
               "for the whole run",
               true,
               false,
               {},
               split_views(),
               [](milliseconds, const WorkerSettings&) { return std::vector<Action>{}; }});

  {
    // The clients' member guard off: a restarted member's grants count at once.
    WorkerSettings unguarded = contended_on_one_key();
    unguarded.member_guard = false;
    s.push_back({"restart_without_persistence",
                 "nodes 0, 1 and 2 killed with -9 and restarted at once without "
                 "persistence, forgetting every lock; the clients' member guard off",
                 false,
                 true,
                 {},
                 unguarded,
                 [](milliseconds d, const WorkerSettings&) {
                   std::vector<Action> out;
                   every(out, at_fraction(d, 0.15), at_fraction(d, 0.8), milliseconds(500),
                         [](int, milliseconds at) { return restart_three(at); });
                   return out;
                 }});
  }

  // The same fault with the member guard on (its default): a member that restarted is not
  // counted for the workers' ttl after the clients reconnect, so the forgotten locks
  // expire before its grants count. The restarts come every 2 x ttl + 500 ms, so that
  // locks are taken, and held across the next restart, between them. The restarted nodes
  // lose their fencing counters too, which no guard brings back: token order is outside
  // the model here (docs/safety.md).
  s.push_back({"restart_without_persistence_guarded",
               "nodes 0, 1 and 2 killed with -9 and restarted at once without persistence "
               "while locks are held, in a loop; the clients' member guard on",
               true,
               false,
               {},
               contended_on_one_key(),
               [](milliseconds d, const WorkerSettings& w) {
                 std::vector<Action> out;
                 every(out, at_fraction(d, 0.15), at_fraction(d, 0.8),
                       2 * w.ttl + milliseconds(500),
                       [](int, milliseconds at) { return restart_three(at); });
                 return out;
               }});
  s.back().tokens_in_model = false;

  {
    // Nodes 0-2 fail over every ttl + 400 ms to replicas whose link was cut ttl + 100 ms
    // before: every lock held at a promotion is missing on the promoted replicas (the ones
    // held at the cut expired there), and the locks taken in the 300 ms before the next
    // cut are held across it. A short ttl, for many promotions in a short run. One
    // schedule, with the clients' member guard off (a promoted replica's grants count at
    // once) and on (not for the ttl after the clients reconnect to it).
    WorkerSettings load = contended_on_one_key();
    load.ttl = milliseconds(1000);
    load.wait = milliseconds(1000);
    const auto schedule = [](milliseconds d, const WorkerSettings& w) {
      return fail_over_three(d, w.ttl + milliseconds(400), w.ttl + milliseconds(100));
    };
    WorkerSettings unguarded = load;
    unguarded.member_guard = false;
    s.push_back({"failover_lagging_replica",
                 "nodes 0, 1 and 2 fail over to replicas whose link was cut a TTL before, so "
                 "they miss every lock held; the clients' member guard off",
                 false, true, replicated_three(), unguarded, schedule});
    // The promoted replicas miss fencing counter increments too: token order is outside
    // the model, as for restarts without persistence.
    s.push_back({"failover_lagging_replica_guarded",
                 "the same failovers with the clients' member guard on", true, false,
                 replicated_three(), load, schedule});
    s.back().tokens_in_model = false;
    // The same failovers with the guard off, every node with a replica (so that WAIT 1
    // can be answered everywhere) and every grant counted only once its member's one
    // replica acknowledged it: a replica whose link is cut acknowledges nothing, so
    // nothing counts on it while it lags, and once promoted it has every grant that
    // counted.
    WorkerSettings acked = unguarded;
    acked.replicas_to_ack = 1;
    ClusterSettings all_replicated;
    all_replicated.replicated_nodes = {0, 1, 2, 3, 4};
    s.push_back({"failover_lagging_replica_acked",
                 "the same failovers with the clients' member guard off and grants counted "
                 "only once their replica acknowledged them (replicas_to_ack 1)",
                 true, false, all_replicated, acked, schedule});
  }

  {
    // Every split lasts two ttls and a half: the clients moved to the promoted replica see
    // another server and leave it out for the ttl (the member guard, on), and then both
    // masters of node 0 grant for 1.5 s. The clients moved back at the heal are guarded
    // for a ttl too, and get another second before the next split. Every node has one
    // replica in both scenarios; only replicas_to_ack differs.
    const auto schedule = [](milliseconds d, const WorkerSettings& w) {
      return two_masters(d, 2 * w.ttl + milliseconds(500), w.ttl + milliseconds(1000));
    };
    ClusterSettings all_replicated;
    all_replicated.replicated_nodes = {0, 1, 2, 3, 4};
    s.push_back({"two_masters_split_clients",
                 "node 0's replica promoted while its old master goes on granting to the "
                 "clients still on it: one member voting twice, which a majority does not "
                 "absorb; every node with one replica, replicas_to_ack 0",
                 false, true, all_replicated, split_clients(), schedule});
    // Once node 0's one replica is promoted its old master has no replica left: WAIT 1
    // answers 0 there, so nothing the old master grants counts. The new master has no
    // replica either until the heal, so node 0 counts for nobody while it is split.
    WorkerSettings acked = split_clients();
    acked.replicas_to_ack = 1;
    s.push_back({"two_masters_split_clients_acked",
                 "the same two masters of node 0 with grants counted only once their "
                 "member's one replica acknowledged them (replicas_to_ack 1)",
                 true, false, all_replicated, acked, schedule});
  }

  {
    ClusterSettings fake;
    fake.fake_clock_nodes = {0, 1};
    // Holds longer than a third of the TTL, so that the fast nodes forget a lock while
    // its holder still holds it.
    WorkerSettings long_holds = contended();
    long_holds.hold = milliseconds(1500);
    s.push_back({"clock_fast_two", "the clocks of nodes 0 and 1 run 3x fast (node 4 flaps)", false,
                 false, fake, long_holds, [](milliseconds d, const WorkerSettings&) {
                   std::vector<Action> out{
                       {milliseconds(0), "clock 3x on nodes 0,1", [](ScenarioContext& c) {
                          c.cluster.set_clock(0, 0, 3.0);
                          c.cluster.set_clock(1, 0, 3.0);
                        }}};
                   flapping(out, 4, d, milliseconds(250));
                   return out;
                 }});

    s.push_back({"clock_jump_two",
                 "the clocks of nodes 0 and 1 jump forward past the TTL again and "
                 "again (node 4 flaps)",
                 false, true, fake, contended(), [](milliseconds d, const WorkerSettings& w) {
                   std::vector<Action> out;
                   auto offset = std::make_shared<long long>(0);
                   const long long jump = 2 * w.ttl.count();
                   every(out, at_fraction(d, 0.1), at_fraction(d, 0.85), milliseconds(300),
                         [&](int, milliseconds at) {
                           return Action{
                               at,
                               "clock of nodes 0,1 jumps " + std::to_string(jump) + " ms forward",
                               [offset, jump](ScenarioContext& c) {
                                 *offset += jump;
                                 c.cluster.set_clock(0, *offset, 1.0);
                                 c.cluster.set_clock(1, *offset, 1.0);
                               }};
                         });
                   flapping(out, 4, d, milliseconds(250));
                   return out;
                 }});
  }

  {
    // split_views with semaphores alone, granted by 3 nodes where K = 2 on 5 needs 4: the
    // placement above then admits a third holder, and the checker must see it. One key,
    // so that every holder contends for the same permits, and one thread per process:
    // a client hands a permit it releases to its own waiters first, so with several
    // threads one process tends to keep both permits and the others rarely get a turn.
    WorkerSettings lowered = split_views();
    lowered.primitive = "semaphore";
    lowered.keys = 1;
    lowered.threads = 1;
    lowered.unsafe_permit_quorum = 3;
    s.push_back({"permit_quorum_lowered",
                 "TEST ONLY: split_views with permits of K = 2 granted by 3 nodes instead of "
                 "the safe 4 (--unsafe-permit-quorum 3)",
                 false,
                 true,
                 {},
                 lowered,
                 [](milliseconds, const WorkerSettings&) { return std::vector<Action>{}; },
                 "permit"});
  }

  {
    // The same placement with permits at the safe quorum, and three threads per process:
    // the load that chaos/compare-redis-semaphore also gives to npm redis-semaphore
    // (tests/interop/redis_semaphore_worker.js through --worker), whose majority quorum
    // admits the three holders above. Here workers 0 and 1 reach only three nodes and get
    // no permit at all; the three threads of worker 2 contend for the two permits.
    WorkerSettings permits = split_views();
    permits.primitive = "semaphore";
    permits.keys = 1;
    permits.threads = 3;
    s.push_back({"split_views_permits",
                 "split_views with permits of K = 2 alone, one key, three threads per worker, "
                 "at the safe quorum (the load of chaos/compare-redis-semaphore)",
                 true,
                 false,
                 {},
                 permits,
                 [](milliseconds, const WorkerSettings&) { return std::vector<Action>{}; }});
  }

  {
    // Candidates of four elections (three each) campaign, lead 20-80 ms (one term in
    // eight 1.5-3 TTLs, extended by the watchdog), resign, and one term in six crash (the
    // key lapses at its TTL), while the nodes fail in turn, each fault
    // outlasting the TTL: a node paused (its grants expire under it), a node killed and
    // restarted, a majority cut off (every leader loses its key and must see its stop
    // token), a minority cut off. Worker 0 is paused past its leaders' validity midway, so
    // their late writes meet the store's fence. The AOF, fsync'd on every write, keeps a
    // killed node's keys and fencing counters (the terms): both rules are in the model.
    ClusterSettings aof;
    aof.appendonly = true;
    WorkerSettings candidates;
    candidates.primitive = "election";
    candidates.keys = 4;
    s.push_back(
        {"election_faults",
         "leader elections (campaign, lead, resign or crash) while nodes are paused past the "
         "TTL, killed and restarted, and partitioned (majority and minority), and one worker is "
         "paused past its leaders' validity",
         true, false, aof, candidates, [](milliseconds d, const WorkerSettings& w) {
           std::vector<Action> out;
           const milliseconds fault = w.ttl + milliseconds(300);
           every(out, at_fraction(d, 0.05), at_fraction(d, 0.97) - fault, w.ttl + milliseconds(400),
                 [&](int i, milliseconds at) {
                   const auto node = [i](int k) { return static_cast<std::size_t>(i + k) % 5; };
                   const std::size_t n = node(0);
                   switch (i % 4) {
                     case 0:
                       out.push_back({at + fault, "SIGCONT node " + std::to_string(n),
                                      [n](ScenarioContext& c) { c.cluster.node(n).resume(); }});
                       return Action{at, "SIGSTOP node " + std::to_string(n),
                                     [n](ScenarioContext& c) { c.cluster.node(n).pause(); }};
                     case 1:
                       return Action{at, "kill -9 and restart node " + std::to_string(n),
                                     [n](ScenarioContext& c) {
                                       c.cluster.kill9(n);
                                       c.cluster.restart(n);
                                     }};
                     case 2:
                       out.push_back(set_mode(at + fault, {n, node(1), node(2)}, ProxyMode::pass));
                       return set_mode(at, {n, node(1), node(2)}, ProxyMode::partition);
                     default:
                       out.push_back(set_mode(at + fault, {n, node(1)}, ProxyMode::pass));
                       return set_mode(at, {n, node(1)}, ProxyMode::partition);
                   }
                 });
           out.push_back({at_fraction(d, 0.5), "SIGSTOP worker 0",
                          [](ScenarioContext& c) { c.workers.at(0).pause(); }});
           out.push_back({at_fraction(d, 0.5) + 2 * w.ttl, "SIGCONT worker 0",
                          [](ScenarioContext& c) { c.workers.at(0).resume(); }});
           return out;
         }});
  }

  {
    // split_views with elections whose campaigns need 2 nodes instead of a majority: a
    // leader of worker 0 holds nodes 0-2, and a candidate of worker 1, which sees 2-4,
    // still finds 3 and 4 free. Two leaders at once, which the checker must report.
    WorkerSettings lowered = split_views();
    lowered.primitive = "election";
    lowered.keys = 1;
    lowered.threads = 2;
    lowered.unsafe_election_quorum = 2;
    s.push_back({"election_quorum_lowered",
                 "TEST ONLY: split_views with leader elections whose campaigns are granted by 2 "
                 "nodes instead of a majority (--unsafe-election-quorum 2)",
                 false,
                 true,
                 {},
                 lowered,
                 [](milliseconds, const WorkerSettings&) { return std::vector<Action>{}; },
                 "election"});
  }

  {
    // Five Sentinel groups (a master, one replica, three sentinels; AOF fsync'd always),
    // every 2.5 s one fault, in turn: a failover, a pause, a kill, and four groups failed
    // over at once to replicas 2 s behind. Each grant counts only once the group's one
    // replica acknowledged it (replicas_to_ack 1, the remedy docs/safety.md names for
    // groups that may have two masters): a paused master wakes up a master beside the
    // promoted replica, a SENTINEL FAILOVER leaves the old master one until the sentinels
    // demote it, and a lagging replica acknowledges nothing. The member guard is on (its
    // default). Two keys per primitive, holds of 2.5 s: a holder granted while the
    // replicas lag still holds when they have been promoted (about a second after the
    // masters stop), so a grant counted without its replica would be overtaken there. A
    // ttl just above the hold: the lock a holder released on the masters stays on the
    // lagging replicas until its ttl, and would refuse the next holder's rival there.
    WorkerSettings load = contended();
    load.keys = 2;
    load.ttl = milliseconds(2700);
    load.wait = milliseconds(500);
    load.hold = milliseconds(2500);
    load.replicas_to_ack = 1;
    const auto schedule = [](milliseconds d, const WorkerSettings& w) {
      return sentinel_group_faults(d, w, {0, 1, 2, 3, 4}, milliseconds(2500));
    };
    s.push_back({"sentinel_members_failovers",
                 "five Sentinel group members (master, one replica, three sentinels, AOF): in "
                 "turn a SENTINEL FAILOVER, the master SIGSTOPped past the TTL (the sentinels "
                 "fail it over), the master killed and restarted after their failover, four "
                 "groups failed over at once to replicas 2 s behind; replicas_to_ack 1",
                 true, false, members_of(sentinel_group_member(), 5), load, schedule});

    // The same with neither remedy (allow_two_masters, as a fleet whose servers do not
    // refuse such writes would set it) and the member guard off: grants the promoted
    // replicas never had count, and the checker must see the overlaps.
    WorkerSettings unacked = load;
    unacked.replicas_to_ack = 0;
    unacked.allow_two_masters = true;
    unacked.member_guard = false;
    s.push_back({"sentinel_members_unacked",
                 "sentinel_members_failovers with replicas_to_ack 0, allow_two_masters and the "
                 "member guard off",
                 false, true, members_of(sentinel_group_member(), 5), unacked, schedule});

    // The same groups and faults with leader elections granted by 2 members instead of
    // a majority, while each worker process misses another minority of the members: a
    // leader of worker 0 holds members 0-2, and a candidate of worker 1, which sees 2-4,
    // still finds 3 and 4 free. The checker must see the two leaders on these members.
    WorkerSettings lowered = split_views();
    lowered.primitive = "election";
    lowered.keys = 1;
    lowered.threads = 2;
    lowered.unsafe_election_quorum = 2;
    lowered.replicas_to_ack = 1;
    s.push_back({"sentinel_members_quorum_lowered",
                 "TEST ONLY: sentinel_members_failovers with leader elections granted by 2 "
                 "members instead of a majority (--unsafe-election-quorum 2), each worker "
                 "missing another minority of the members",
                 false, true, members_of(sentinel_group_member(), 5), lowered, schedule,
                 "election"});
  }

  {
    // Five Redis Clusters of three shards, each shard a master and a replica (AOF fsync'd
    // always), every 1.5 s one fault on the shard holding a contended key, the members in
    // turn. replicas_to_ack 0: a cluster member is not refused (a master cut off from its
    // cluster stops taking writes before a replica may replace it), and a CLUSTER FAILOVER
    // waits for the replica to catch up; the member guard covers the promoted replica and
    // the restarted master, each for the TTL.
    WorkerSettings load;
    load.hold = milliseconds(100);
    s.push_back({"cluster_members_faults",
                 "five Redis Cluster members of three shards with a replica each (AOF): in turn "
                 "the master of a contended key's shard SIGSTOPped past the TTL, killed and "
                 "restarted, failed over to its replica (CLUSTER FAILOVER), and the key's slot "
                 "moved to another master during contention",
                 true, false, members_of(cluster_member(), 5), load,
                 [](milliseconds d, const WorkerSettings& w) {
                   return cluster_faults(d, w, {0, 1, 2, 3, 4}, milliseconds(1500));
                 }});
  }

  {
    // One fleet of every kind: Sentinel groups 0 and 1, clusters 2 and 3, and node 4 a
    // standalone master behind its proxy. A cluster member cannot take replicas_to_ack
    // (its WAIT would not follow each write to the shard that took it), so the groups'
    // two masters are absorbed by the quorum instead: 4 of 5, so that two quorums share
    // two members (docs/safety.md, "Sentinel groups"). The two schedules above on their
    // members, and node 4 SIGSTOPped past the TTL and killed and restarted (AOF) in turn.
    ClusterSettings mixed;
    mixed.members = {sentinel_group_member(), sentinel_group_member(), cluster_member(),
                     cluster_member()};
    mixed.appendonly = true;
    WorkerSettings load;
    load.hold = milliseconds(100);
    load.quorum = 4;
    s.push_back(
        {"mixed_members_faults",
         "Sentinel groups 0-1, Redis Clusters 2-3 and a standalone master 4: the "
         "Sentinel and cluster faults of the two scenarios above on their members, "
         "node 4 SIGSTOPped and killed; quorum 4 of 5",
         true, false, mixed, load, [](milliseconds d, const WorkerSettings& w) {
           std::vector<Action> out = sentinel_group_faults(d, w, {0, 1}, milliseconds(4000));
           for (Action& a : cluster_faults(d, w, {2, 3}, milliseconds(4000))) {
             a.at += milliseconds(1300);
             out.push_back(std::move(a));
           }
           every(out, at_fraction(d, 0.05) + milliseconds(2600), at_fraction(d, 0.85),
                 milliseconds(4000), [&](int i, milliseconds at) {
                   if (i % 2 == 1) {
                     return Action{at, "kill -9 and restart (AOF) node 4", [](ScenarioContext& c) {
                                     c.cluster.kill9(4);
                                     c.cluster.restart(4);
                                   }};
                   }
                   out.push_back({at + w.ttl + milliseconds(300), "SIGCONT node 4",
                                  [](ScenarioContext& c) { c.cluster.node(4).resume(); }});
                   return Action{at, "SIGSTOP node 4",
                                 [](ScenarioContext& c) { c.cluster.node(4).pause(); }};
                 });
           return out;
         }});
  }
  return s;
}

}  // namespace redlock::chaos

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <system_error>
#include <thread>

#include <redlock/testing/member.hpp>

#include "member_impl.hpp"

namespace redlock::testing {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

}  // namespace

Member::Impl::Impl(std::size_t index_, std::string dir_, const FleetOptions& options,
                   const MemberSpec& spec, detail::NetnsNetwork* network_)
    : index(index_),
      kind(spec.kind),
      dir(std::move(dir_)),
      persistence(options.persistence),
      network(network_),
      client_hosts(network_ ? options.client_hosts : 0) {
  std::filesystem::create_directories(dir);
  try {
    if (kind == MemberKind::sentinel) {
      detail::SentinelGroupOptions group_options;
      group_options.dir = dir;
      group_options.persistence = persistence;
      group_options.replicas = spec.replicas;
      group_options.down_after_ms = static_cast<int>(spec.down_after.count());
      group_options.server_args = options.extra_args;
      group = std::make_unique<detail::SentinelGroup>(group_options);
      return;
    }
    if (kind == MemberKind::cluster) {
      detail::ShardedClusterOptions cluster_options;
      cluster_options.dir = dir;
      cluster_options.persistence = persistence;
      cluster_options.shards = spec.shards;
      cluster_options.replicas_per_shard = spec.replicas;
      cluster_options.server_args = options.extra_args;
      cluster = std::make_unique<detail::ShardedCluster>(cluster_options);
      return;
    }
    detail::RedisServerOptions server_options;
    server_options.dir = dir;
    server_options.appendonly_always = persistence;
    server_options.extra_args = options.extra_args;
    if (network) {
      // Every address of its namespace is one of its links'.
      server_options.network_namespace = network->member_namespace(index);
      server_options.bind = "0.0.0.0";
      server_options.port = detail::NetnsNetwork::member_port;
    }
    if (options.fake_clock) {
      // Beside the member's directory, whose contents a restart without persistence deletes.
      clock.emplace(dir + ".clock");
      server_options.environment =
          clock->environment(detail::fake_clock_library(options.fake_clock_library));
    }
    server = std::make_unique<detail::RedisServer>(server_options);
  } catch (const std::exception& e) {
    throw std::runtime_error("redlock::testing: " + name() + " did not start: " + e.what());
  }
  if (options.proxies && !network) {
    fault_proxy = std::make_unique<chaos::FaultProxy>("127.0.0.1", server->port());
  }
}

Member::Impl::~Impl() {
  // The proxy first: it would otherwise carry connections to a server that is gone.
  fault_proxy.reset();
}

bool Member::Impl::answering() const {
  return server && server->running() && !server->paused();
}

chaos::FaultProxy& Member::Impl::proxy(const char* verb) {
  if (kind != MemberKind::standalone) {
    throw std::logic_error("redlock::testing: Member::" + std::string(verb) + " on " + name() +
                           ": there is no fault proxy in front of it, because its servers "
                           "announce their own addresses, which clients then use directly");
  }
  if (!fault_proxy && network) {
    throw std::logic_error("redlock::testing: Member::" + std::string(verb) + " on " + name() +
                           " needs a fault proxy, and a fleet with "
                           "FleetOptions::network_namespaces has none (partition() cuts a link)");
  }
  if (!fault_proxy) {
    throw std::logic_error("redlock::testing: Member::" + std::string(verb) + " on " + name() +
                           " needs the fault proxies, and FleetOptions::proxies is off");
  }
  return *fault_proxy;
}

std::vector<std::size_t> Member::Impl::every_side() const {
  std::vector<std::size_t> sides;
  for (std::size_t side = 0; side <= client_hosts; ++side) sides.push_back(side);
  return sides;
}

detail::NetnsNetwork& Member::Impl::namespaces(const char* verb) {
  if (!network) {
    throw std::logic_error("redlock::testing: Member::" + std::string(verb) + " on " + name() +
                           " needs a fleet made with FleetOptions::network_namespaces: only "
                           "a member in a network namespace of its own has links to cut");
  }
  return *network;
}

std::string Member::Impl::name() const {
  const char* what = kind == MemberKind::sentinel  ? " (a Sentinel group)"
                     : kind == MemberKind::cluster ? " (a cluster)"
                                                   : "";
  return "member " + std::to_string(index) + what;
}

std::vector<detail::RedisServer*> Member::Impl::data_servers() const {
  std::vector<detail::RedisServer*> out;
  if (group) {
    for (std::size_t i = 0; i < group->servers(); ++i) out.push_back(&group->server(i));
  }
  if (cluster) {
    for (std::size_t i = 0; i < cluster->servers(); ++i) out.push_back(&cluster->server(i));
  }
  return out;
}

std::vector<detail::RedisServer*> Member::Impl::masters() const {
  if (group) return {&group->master()};
  std::vector<detail::RedisServer*> out;
  for (detail::RedisServer* server : data_servers()) {
    if (!server->running()) continue;
    // Only pause() stops a cluster's server, and it stops masters; asking one would wait.
    if (server->paused() ||
        detail::SentinelGroup::ask(*server, {"ROLE"}).elements.at(0).str == "master") {
      out.push_back(server);
    }
  }
  return out;
}

std::string Member::Impl::log_tail(std::size_t lines) const {
  if (kind != MemberKind::standalone) {
    std::string text;
    for (const detail::RedisServer* each : data_servers()) text += each->log_tail(lines);
    for (std::size_t i = 0; group && i < group->sentinel_count(); ++i) {
      text += group->sentinel(i).log_tail(lines);
    }
    return text;
  }
  return server->log_tail(lines);
}

namespace {

// Everything but what the server needs to come back as itself: its logs, its cluster
// or sentinel configuration, its socket. What is left is its data: the append-only
// directory, any RDB file.
void delete_data(const std::string& dir) {
  static const char* const kept[] = {"redis.log", "redis.stdout", "nodes.conf", "sentinel.conf",
                                     "redis.sock"};
  std::error_code ignored;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ignored)) {
    const auto name = entry.path().filename().string();
    if (std::find(std::begin(kept), std::end(kept), name) == std::end(kept)) {
      std::filesystem::remove_all(entry.path(), ignored);
    }
  }
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Returns once the server's TIME reads what the member's clock was set to.
void wait_for_clock(Member::Impl& impl) {
  // A stopped or dead server reads its clock again when it runs.
  if (!impl.answering()) return;
  // The library looks at its file at most every 10 ms: a reading taken later is of the
  // new clock, so calibrate() learns the library's state and not the old one's.
  std::this_thread::sleep_for(15ms);
  const auto give_up = Clock::now() + 5s;
  std::string last;
  // The library re-anchors its clock when it notices the file, a moment after it was
  // written (more on a busy machine), from where the old rate had taken it by then: from
  // 50 times as fast back to the real rate, 28 ms late is 1.4 s off. Two readings off by
  // the same amount show the library has the file and only the offset is wrong.
  bool off_before = false;
  std::int64_t previous_error = 0;
  for (;;) {
    const std::int64_t before = now_ns();
    const detail::Reply time = impl.server->command({"TIME"});
    const std::int64_t after = now_ns();
    if (time.elements.size() == 2) {
      const std::int64_t reading = std::stoll(time.elements[0].str) * 1'000'000'000 +
                                   std::stoll(time.elements[1].str) * 1'000;
      const std::int64_t slack = impl.clock->tolerance_ns();
      if (reading >= impl.clock->expected(before) - slack &&
          reading <= impl.clock->expected(after) + slack) {
        impl.clock->calibrate(before + (after - before) / 2, reading);
        return;
      }
      const std::int64_t error = reading - impl.clock->expected(before + (after - before) / 2);
      if (off_before && std::abs(error - previous_error) <= slack) {
        impl.clock->correct(error);
        off_before = false;
        std::this_thread::sleep_for(15ms);  // as above: the next reading is of the new file
      } else {
        off_before = true;
        previous_error = error;
      }
      last = "TIME read " + std::to_string((reading - before) / 1'000'000) +
             " ms from the real time, and " +
             std::to_string((impl.clock->expected(before) - before) / 1'000'000) +
             " ms were expected";
    }
    if (Clock::now() > give_up) {
      throw std::runtime_error("redlock::testing: the clock of " + impl.name() +
                               " did not change within 5 s: " + last + "\n" + impl.log_tail(10));
    }
    std::this_thread::sleep_for(5ms);
  }
}

}  // namespace

Member::Member(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Member::~Member() = default;

std::size_t Member::index() const {
  return impl_->index;
}
MemberKind Member::kind() const {
  return impl_->kind;
}
std::string Member::url() const {
  if (impl_->group) return impl_->group->url();
  if (impl_->cluster) return impl_->cluster->url();
  return impl_->fault_proxy ? "redis://127.0.0.1:" + std::to_string(proxy_port()) : direct_url();
}
std::string Member::direct_url() const {
  if (impl_->kind != MemberKind::standalone) return url();
  return "redis://" + address() + ":" + std::to_string(port());
}
std::string Member::address() const {
  return impl_->network ? impl_->network->member_address(impl_->index, 0) : "127.0.0.1";
}
std::uint16_t Member::port() const {
  if (impl_->group) return impl_->group->named_master_port();
  if (impl_->cluster) return impl_->cluster->server(0).port();
  return impl_->server->port();
}
std::uint16_t Member::proxy_port() const {
  return impl_->fault_proxy ? impl_->fault_proxy->port() : 0;
}
std::string Member::dir() const {
  return impl_->dir;
}
std::string Member::log_tail(std::size_t lines) const {
  return impl_->log_tail(lines);
}

pid_t Member::pid() const {
  if (impl_->group) return impl_->group->master().pid();
  if (impl_->cluster) return -1;
  return impl_->server->pid();
}
bool Member::running() const {
  if (impl_->server) return impl_->server->running();
  for (const detail::RedisServer* server : impl_->data_servers()) {
    if (!server->running()) return false;
  }
  return true;
}
bool Member::paused() const {
  if (impl_->server) return impl_->server->running() && impl_->server->paused();
  for (const detail::RedisServer* server : impl_->data_servers()) {
    if (server->running() && server->paused()) return true;
  }
  return false;
}

void Member::pause() {
  if (impl_->kind != MemberKind::standalone) {
    if (!impl_->paused_servers.empty()) return;
    for (detail::RedisServer* server : impl_->masters()) {
      if (!server->running() || server->paused()) continue;
      server->pause();
      impl_->paused_servers.push_back(server);
    }
    return;
  }
  impl_->server->pause();
}

void Member::resume() {
  if (impl_->kind != MemberKind::standalone) {
    for (detail::RedisServer* server : impl_->paused_servers) server->resume();
    impl_->paused_servers.clear();
    return;
  }
  impl_->server->resume();
}

void Member::kill() {
  if (impl_->kind != MemberKind::standalone) {
    for (detail::RedisServer* server : impl_->masters()) {
      server->kill9();
      std::erase(impl_->paused_servers, server);
    }
    return;
  }
  impl_->server->kill9();
}

void Member::restart(RestartOptions options) {
  if (options.persistence && !impl_->persistence) {
    throw std::invalid_argument("redlock::testing: Member::restart({.persistence = true}) on " +
                                impl_->name() +
                                " needs a fleet made with FleetOptions::persistence: without an "
                                "append-only file there is no data to keep");
  }
  std::vector<detail::RedisServer*> down;
  if (impl_->server) {
    down.push_back(impl_->server.get());
  } else {
    for (detail::RedisServer* server : impl_->data_servers()) {
      if (!server->running()) down.push_back(server);
    }
    if (down.empty()) down = impl_->masters();
  }
  // A new process reads the real clock until the file is there again.
  if (impl_->clock) impl_->clock->stopping();
  for (detail::RedisServer* server : down) {
    server->kill9();
    std::erase(impl_->paused_servers, server);
    if (!options.persistence) delete_data(server->dir());
    try {
      server->restart();
    } catch (const std::exception& e) {
      throw std::runtime_error("redlock::testing: " + impl_->name() +
                               " did not restart: " + e.what());
    }
  }
  if (impl_->clock) {
    impl_->clock->started();
    if (!impl_->clock->real()) wait_for_clock(*impl_);
  }
  // A master that comes back must be heard of by the others before they serve its
  // slots again.
  if (impl_->cluster) impl_->cluster->wait_consistent();
}

void Member::fail_over() {
  using Until = detail::SentinelGroup::Until;
  if (impl_->group) {
    if (impl_->group->servers() < 2) {
      throw std::logic_error("redlock::testing: Member::fail_over on " + impl_->name() +
                             ": its master has no replica (MemberSpec::replicas is 0)");
    }
    impl_->group->failover(Until::switched);
    return;
  }
  if (impl_->cluster) {
    const auto masters = impl_->masters();
    if (masters.size() == impl_->cluster->servers()) {
      throw std::logic_error("redlock::testing: Member::fail_over on " + impl_->name() +
                             ": its shards have no replicas (MemberSpec::replicas is 0)");
    }
    for (detail::RedisServer* master : masters) {
      impl_->cluster->fail_over_to(impl_->cluster->replica_of(*master));
    }
    return;
  }
  throw std::logic_error("redlock::testing: Member::fail_over on " + impl_->name() +
                         ": a standalone server has no replica to hand its role to");
}

void Member::cut() {
  impl_->proxy("cut").set_mode(chaos::ProxyMode::partition);
}

void Member::heal() {
  auto& proxy = impl_->proxy("heal");
  proxy.set_latency(chaos::Direction::up, std::chrono::milliseconds(0));
  proxy.set_latency(chaos::Direction::down, std::chrono::milliseconds(0));
  proxy.set_mode(chaos::ProxyMode::pass);
}

void Member::slow(std::chrono::milliseconds delay) {
  impl_->proxy("slow").set_latency(chaos::Direction::down, delay);
}

void Member::reset_connections() {
  impl_->proxy("reset_connections").reset_all();
}

void Member::partition(Partition how) {
  impl_->namespaces("partition").partition(impl_->index, impl_->every_side(), how);
}

void Member::heal_partition() {
  impl_->namespaces("heal_partition").heal(impl_->index, impl_->every_side());
}

bool Member::partitioned() const {
  if (!impl_->network) return false;
  for (std::size_t side = 0; side <= impl_->client_hosts; ++side) {
    if (impl_->network->partitioned(impl_->index, side)) return true;
  }
  return false;
}

void Member::set_clock(std::chrono::milliseconds offset, double rate) {
  if (impl_->kind != MemberKind::standalone) {
    throw std::logic_error("redlock::testing: Member::set_clock on " + impl_->name() +
                           ": the fake clock is preloaded into standalone members only");
  }
  if (!impl_->clock) {
    throw std::logic_error("redlock::testing: Member::set_clock on " + impl_->name() +
                           " needs a fleet made with FleetOptions::fake_clock");
  }
  impl_->clock->set(offset, rate);
  wait_for_clock(*impl_);
}

}  // namespace redlock::testing

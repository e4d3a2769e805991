#include "netns_network.hpp"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include <redlock/testing/unsupported.hpp>

#include "ip_command.hpp"
#include "tcp_probe.hpp"

namespace redlock::testing::detail {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::size_t max_members = 63;  // /30s in a /24, one /24 per side
constexpr std::size_t max_hosts = 254;

std::string base36(unsigned value) {
  static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string out;
  do {
    out.insert(out.begin(), digits[value % 36]);
    value /= 36;
  } while (value != 0);
  return out;
}

// Unique to this fleet among the live ones of every process: the pid, and a count of
// this process's fleets (base 36, two characters for 1,296 of them, so that the longest
// device name, <prefix>m62 with a seven-digit pid, fits the kernel's 15 characters).
std::string make_prefix() {
  static std::atomic<unsigned> fleets{0};
  return "rl" + std::to_string(::getpid()) + "f" + base36(fleets++ % 1296);
}

// A locally administered hardware address naming the side, the member and the end. Each
// pair is a segment of its own, so these only need to be told apart within a pair.
std::string mac(std::size_t side, std::size_t member, int end) {
  char text[18];
  std::snprintf(text, sizeof text, "02:72:6c:%02x:%02x:%02x", static_cast<unsigned>(side),
                static_cast<unsigned>(member), end);
  return text;
}

bool refused_by_kernel(const std::string& output) {
  return output.find("not supported") != std::string::npos ||
         output.find("Operation not permitted") != std::string::npos ||
         output.find("Permission denied") != std::string::npos;
}

// Whether a TCP connect from this thread's namespace gets an answer within `timeout`: a
// connection, or a refusal (the member's kernel answered for a server that is down).
bool answers(const std::string& address, std::uint16_t port, std::chrono::milliseconds timeout) {
  const int error = connect_error(address, port, timeout);
  return error == 0 || error == ECONNREFUSED;
}

// answers(), from inside the namespace file `ns` ("": this thread's own). Another thread
// enters it: a network namespace is a thread's, and the caller's must not change.
bool answers_from(const std::string& ns, const std::string& address, std::uint16_t port,
                  std::chrono::milliseconds timeout) {
  if (ns.empty()) return answers(address, port, timeout);
  bool ok = false;
  std::thread([&] {
    const int fd = ::open(ns.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    const bool entered = ::setns(fd, CLONE_NEWNET) == 0;
    ::close(fd);
    if (entered) ok = answers(address, port, timeout);
  }).join();
  return ok;
}

}  // namespace

NetnsNetwork::NetnsNetwork(std::size_t members, std::size_t hosts)
    : members_(members), hosts_(hosts), prefix_(make_prefix()) {
  if (members > max_members || hosts > max_hosts) {
    throw std::invalid_argument(
        "redlock::testing: FleetOptions::network_namespaces takes at most " +
        std::to_string(max_members) + " members and " + std::to_string(max_hosts) +
        " client hosts");
  }
  if (::geteuid() != 0) {
    throw Unsupported(
        "redlock::testing: FleetOptions::network_namespaces needs root (CAP_SYS_ADMIN and "
        "CAP_NET_ADMIN, to make network namespaces and veth pairs); this process runs as uid " +
        std::to_string(::geteuid()));
  }
  if (ip_binary().empty()) {
    throw Unsupported(
        "redlock::testing: FleetOptions::network_namespaces needs the ip command (Debian: "
        "apt-get install iproute2), which is neither on PATH nor in /usr/sbin, /sbin, /bin");
  }
  guardian_.emplace(ip_binary());
  block_ = claim_address_block(*guardian_);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < members_; ++i) names.push_back(namespace_name('m', i));
  for (std::size_t h = 0; h < hosts_; ++h) names.push_back(namespace_name('h', h));
  add_namespaces(names);
  // The commands of each namespace, in one `ip -batch` each (one ip process per link
  // and step would take seconds): ours and each host's make the pairs, with their
  // member ends in the members' namespaces, which are configured last.
  std::vector<std::vector<std::string>> commands(1 + hosts_ + members_);
  const auto of_side = [&](std::size_t side) -> std::vector<std::string>& {
    return commands[side];
  };
  const auto of_member = [&](std::size_t member) -> std::vector<std::string>& {
    return commands[1 + hosts_ + member];
  };
  for (std::size_t i = 1; i < commands.size(); ++i) commands[i].push_back("link set lo up");
  links_.resize((hosts_ + 1) * members_);
  for (std::size_t side = 0; side <= hosts_; ++side) {
    for (std::size_t i = 0; i < members_; ++i) describe_link(i, side, of_side(side), of_member(i));
  }
  for (std::size_t i = 0; i < commands.size(); ++i) {
    const std::string ns = i == 0        ? std::string()
                           : i <= hosts_ ? namespace_name('h', i - 1)
                                         : namespace_name('m', i - 1 - hosts_);
    const Finished done = try_ip_batch(ns, commands[i]);
    if (done.ok()) continue;
    const std::string why = "redlock::testing: the fleet's links cannot be made here (ip " +
                            (ns.empty() ? std::string() : "-n " + ns + " ") +
                            "-batch): " + done.output;
    if (refused_by_kernel(done.output)) throw Unsupported(why);
    throw std::runtime_error(why);
  }
}

NetnsNetwork::~NetnsNetwork() {
  guardian_->finish();
  // The guardian's work, checked: what it could not delete is tried once more here.
  std::error_code ignored;
  for (const std::string& name : namespaces_) {
    if (std::filesystem::exists("/run/netns/" + name, ignored)) try_ip({"netns", "del", name});
  }
  for (std::size_t i = 0; i < members_ && !links_.empty(); ++i) {
    const std::string& device = link(i, 0).client_device;
    if (std::filesystem::exists("/sys/class/net/" + device, ignored)) {
      try_ip({"link", "del", device});
    }
  }
}

std::string NetnsNetwork::namespace_name(char kind, std::size_t index) const {
  return prefix_ + "-" + kind + std::to_string(index);
}

void NetnsNetwork::add_namespaces(const std::vector<std::string>& names) {
  if (names.empty()) return;
  for (const std::string& name : names) guardian_->undo("netns del " + name);
  namespaces_ = names;
  // The first one alone: it tells whether this place allows namespaces at all.
  if (const Finished made = try_ip({"netns", "add", names[0]}); !made.ok()) {
    throw Unsupported("redlock::testing: `ip netns add " + names[0] +
                      "` fails here: " + made.output);
  }
  std::vector<std::string> rest;
  for (std::size_t i = 1; i < names.size(); ++i) rest.push_back("netns add " + names[i]);
  if (const Finished made = try_ip_batch({}, rest); !made.ok()) {
    throw std::runtime_error("redlock::testing: making the fleet's network namespaces failed: " +
                             made.output);
  }
}

void NetnsNetwork::describe_link(std::size_t member, std::size_t side,
                                 std::vector<std::string>& client_commands,
                                 std::vector<std::string>& member_commands) {
  Link& each = link(member, side);
  each.member_namespace = namespace_name('m', member);
  each.member_device = side == 0 ? "fleet" : "h" + std::to_string(side - 1);
  each.client_namespace = side == 0 ? "" : namespace_name('h', side - 1);
  each.client_device =
      side == 0 ? prefix_ + "m" + std::to_string(member) : "m" + std::to_string(member);
  each.client_address =
      block_.address(static_cast<unsigned>(side), static_cast<unsigned>(4 * member + 1));
  each.member_address =
      block_.address(static_cast<unsigned>(side), static_cast<unsigned>(4 * member + 2));
  each.client_mac = mac(side, member, 1);
  each.member_mac = mac(side, member, 2);
  // A link between two namespaces of the fleet goes with them; one end in ours must be
  // deleted by name.
  if (side == 0) guardian_->undo("link del " + each.client_device);
  client_commands.insert(
      client_commands.end(),
      {"link add " + each.client_device + " address " + each.client_mac + " type veth peer name " +
           each.member_device + " address " + each.member_mac + " netns " + each.member_namespace,
       "addr add " + each.client_address + "/30 dev " + each.client_device,
       "link set " + each.client_device + " up",
       "neigh replace " + each.member_address + " lladdr " + each.member_mac + " dev " +
           each.client_device + " nud permanent"});
  member_commands.insert(member_commands.end(),
                         {"addr add " + each.member_address + "/30 dev " + each.member_device,
                          "link set " + each.member_device + " up",
                          "neigh replace " + each.client_address + " lladdr " + each.client_mac +
                              " dev " + each.member_device + " nud permanent"});
}

NetnsNetwork::Link& NetnsNetwork::link(std::size_t member, std::size_t side) {
  return links_.at(side * members_ + member);
}
const NetnsNetwork::Link& NetnsNetwork::link(std::size_t member, std::size_t side) const {
  return links_.at(side * members_ + member);
}

std::string NetnsNetwork::member_namespace(std::size_t member) const {
  return "/run/netns/" + namespace_name('m', member);
}
std::string NetnsNetwork::host_namespace(std::size_t host) const {
  return "/run/netns/" + namespace_name('h', host);
}
std::string NetnsNetwork::member_address(std::size_t member, std::size_t side) const {
  return link(member, side).member_address;
}

void NetnsNetwork::partition(std::size_t member, const std::vector<std::size_t>& sides,
                             Partition how) {
  Commands commands;
  for (std::size_t side : sides) {
    Link& each = link(member, side);
    if (how == Partition::silent && !each.member_end_down) {
      // The client's end keeps its address, its route and its neighbour entry: its
      // packets leave, and vanish into a peer that is down. No RST, no ICMP error.
      commands.push_back({each.member_namespace, "link set " + each.member_device + " down"});
      each.member_end_down = true;
    }
    if (how == Partition::unreachable && !each.client_address_removed) {
      // Its connected route goes with it; what is left for the address is the block's
      // throw route (in the test's namespace) or nothing (in a host's): ENETUNREACH.
      commands.push_back({each.client_namespace,
                          "addr del " + each.client_address + "/30 dev " + each.client_device});
      each.client_address_removed = true;
    }
  }
  run(commands);
}

void NetnsNetwork::heal(std::size_t member, const std::vector<std::size_t>& sides) {
  Commands commands;
  for (std::size_t side : sides) {
    Link& each = link(member, side);
    // A device set down, or left without an address, forgets its neighbours, the
    // permanent ones too.
    if (each.member_end_down) {
      commands.push_back({each.member_namespace, "link set " + each.member_device + " up"});
      commands.push_back({each.member_namespace, "neigh replace " + each.client_address +
                                                     " lladdr " + each.client_mac + " dev " +
                                                     each.member_device + " nud permanent"});
      each.member_end_down = false;
    }
    if (each.client_address_removed) {
      commands.push_back({each.client_namespace,
                          "addr add " + each.client_address + "/30 dev " + each.client_device});
      commands.push_back({each.client_namespace, "neigh replace " + each.member_address +
                                                     " lladdr " + each.member_mac + " dev " +
                                                     each.client_device + " nud permanent"});
      each.client_address_removed = false;
    }
  }
  run(commands);
  for (std::size_t side : sides) {
    const Link& each = link(member, side);
    const std::string ns =
        each.client_namespace.empty() ? std::string() : "/run/netns/" + each.client_namespace;
    const auto give_up = Clock::now() + 5s;
    while (!answers_from(ns, each.member_address, member_port, 200ms)) {
      if (Clock::now() > give_up) {
        throw std::runtime_error("redlock::testing: the link to " + each.member_address +
                                 " was mended, and the member's port still does not answer "
                                 "after 5 s");
      }
    }
  }
}

void NetnsNetwork::run(const Commands& commands) {
  // One batch per namespace, in the order each first appears.
  std::vector<std::string> order;
  for (const auto& [ns, line] : commands) {
    if (std::find(order.begin(), order.end(), ns) == order.end()) order.push_back(ns);
  }
  for (const std::string& ns : order) {
    std::vector<std::string> lines;
    for (const auto& [where, line] : commands) {
      if (where == ns) lines.push_back(line);
    }
    if (const Finished done = try_ip_batch(ns, lines); !done.ok()) {
      throw std::runtime_error("redlock::testing: ip " +
                               (ns.empty() ? std::string() : "-n " + ns + " ") +
                               "-batch failed: " + done.output);
    }
  }
}

bool NetnsNetwork::partitioned(std::size_t member, std::size_t side) const {
  const Link& each = link(member, side);
  return each.member_end_down || each.client_address_removed;
}

}  // namespace redlock::testing::detail

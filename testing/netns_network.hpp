#pragma once
// The network of a fleet made with FleetOptions::network_namespaces: each member in a
// network namespace of its own, reached from the test process's namespace, and from each
// client host's, over a veth pair of its own, so that the kernel makes the faults. A link
// of a member to one side (side 0: the test process; side h + 1: client host h) is a
// point-to-point /30 of the fleet's address block:
//
//   side s, device <prefix>m<i> (side 0) or m<i>    member i, device fleet (side 0) or h<s-1>
//   a.b.<s>.<4i+1>/30                  <--veth-->   a.b.<s>.<4i+2>/30 :6379
//
// Both ends know each other's hardware address for good (permanent neighbour entries), so
// that a silent partition stays silent: no neighbour lookup fails into EHOSTUNREACH.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <redlock/testing/member.hpp>

#include "address_block.hpp"
#include "netns_guardian.hpp"

namespace redlock::testing::detail {

class NetnsNetwork {
 public:
  /// The port of every member's server, on each of its addresses.
  static constexpr std::uint16_t member_port = 6379;

  /// Makes the namespaces of `members` members and `hosts` client hosts, and their links.
  /// Throws Unsupported (redlock/testing/unsupported.hpp) when not root, without the ip
  /// command, or when the kernel refuses a namespace or a veth pair; std::invalid_argument
  /// past 63 members or 254 hosts; std::runtime_error otherwise. Whatever it made before
  /// throwing is removed.
  NetnsNetwork(std::size_t members, std::size_t hosts);
  /// Removes every namespace, link and route it made, killing whatever still runs inside
  /// the namespaces, and returns once they are gone.
  ~NetnsNetwork();
  NetnsNetwork(const NetnsNetwork&) = delete;
  NetnsNetwork& operator=(const NetnsNetwork&) = delete;

  /// The start of every name it gives ("rl<pid>f<n>"): namespaces <prefix>-m<i> and
  /// <prefix>-h<h>, and the test process's ends of the links <prefix>m<i>.
  const std::string& prefix() const { return prefix_; }
  /// The namespace file (/run/netns/<name>) of member `member`, of host `host`.
  std::string member_namespace(std::size_t member) const;
  std::string host_namespace(std::size_t host) const;
  /// Member `member`'s address as side `side` reaches it.
  std::string member_address(std::size_t member, std::size_t side) const;

  /// Breaks the links between `member` and each of `sides` (see Partition); returns once
  /// in effect. A link already broken that way is left as it is.
  void partition(std::size_t member, const std::vector<std::size_t>& sides, Partition how);
  /// Mends them, both ways, and returns once each side connects to the member's port
  /// again (or is refused by it, for a member that is down). Throws std::runtime_error
  /// when one does not within 5 s.
  void heal(std::size_t member, const std::vector<std::size_t>& sides);
  bool partitioned(std::size_t member, std::size_t side) const;

 private:
  struct Link {
    std::string client_namespace;  ///< its name; "" for the test process's own
    std::string client_device;
    std::string client_address;
    std::string client_mac;
    std::string member_namespace;
    std::string member_device;
    std::string member_address;
    std::string member_mac;
    bool member_end_down = false;
    bool client_address_removed = false;
  };

  /// ip commands (without "ip"), each with the name of its namespace ("" for ours).
  using Commands = std::vector<std::pair<std::string, std::string>>;
  /// Runs them, one `ip -batch` per namespace; std::runtime_error when one fails.
  void run(const Commands& commands);
  std::string namespace_name(char kind, std::size_t index) const;
  /// Makes the namespaces; Unsupported when the first cannot be made.
  void add_namespaces(const std::vector<std::string>& names);
  /// Fills in the link between `member` and `side`, and appends the ip commands that make
  /// it to those of the client's namespace and of the member's.
  void describe_link(std::size_t member, std::size_t side,
                     std::vector<std::string>& client_commands,
                     std::vector<std::string>& member_commands);
  Link& link(std::size_t member, std::size_t side);
  const Link& link(std::size_t member, std::size_t side) const;

  std::size_t members_;
  std::size_t hosts_;
  std::string prefix_;
  // Declared first among what it owns, so destroyed last: if the constructor throws, the
  // guardian still removes what was made.
  std::optional<NetnsGuardian> guardian_;
  AddressBlock block_;
  std::vector<std::string> namespaces_;
  std::vector<Link> links_;  ///< side-major: links_[side * members_ + member]
};

}  // namespace redlock::testing::detail

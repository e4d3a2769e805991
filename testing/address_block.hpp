#pragma once
// The private addresses of one fleet's links: a /16 that nothing in the test process's
// network namespace uses, claimed for as long as the fleet lives.

#include <cstdint>
#include <string>

namespace redlock::testing::detail {

class NetnsGuardian;

/// A /16 of private address space (RFC 1918).
struct AddressBlock {
  std::uint32_t base = 0;  ///< its first address, in host byte order

  /// "10.200.0.0/16".
  std::string cidr() const;
  /// The address "a.b.<third>.<fourth>" in it.
  std::string address(unsigned third, unsigned fourth) const;
};

/// Picks a /16 of 10.200.0.0-10.254.255.255 or 172.16.0.0/12 that no address and no route
/// of this network namespace overlaps (the default route aside), and claims it with a
/// `throw` route: a lookup for an address of the block that no link of the fleet answers
/// for then fails with ENETUNREACH instead of taking the default route, and fleets of
/// other processes see the block taken. The choice and the claim are made under a lock
/// file (/run/lock/redlock-testing-netns.lock), so two fleets never pick the same block;
/// `guardian` is told to delete the route first. Throws std::runtime_error when every
/// block is taken.
AddressBlock claim_address_block(NetnsGuardian& guardian);

}  // namespace redlock::testing::detail

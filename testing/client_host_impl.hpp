#pragma once
// The state behind a ClientHost: its place among the fleet's network namespaces.

#include <cstddef>
#include <stdexcept>
#include <string>

#include <redlock/testing/fleet.hpp>

#include "netns_network.hpp"

namespace redlock::testing {

struct ClientHost::Impl {
  std::size_t index;
  std::size_t members;
  /// The fleet's, which outlives its hosts.
  detail::NetnsNetwork* network;

  /// `member`, or std::out_of_range naming it.
  std::size_t check(std::size_t member) const {
    if (member >= members) {
      throw std::out_of_range("redlock::testing: client host " + std::to_string(index) +
                              " has no member " + std::to_string(member) + " (the fleet has " +
                              std::to_string(members) + ")");
    }
    return member;
  }
};

}  // namespace redlock::testing

#pragma once
/// @file
/// What a Fleet throws when this machine cannot give it what its options ask for.

#include <stdexcept>
#include <string>

namespace redlock::testing {

/// Thrown by a Fleet whose options need what this process is not allowed, or this kernel
/// does not offer: FleetOptions::network_namespaces without root (CAP_SYS_ADMIN and
/// CAP_NET_ADMIN), without the ip command (iproute2), or where `ip netns add` or a veth
/// pair is refused. what() says which. A test catches it to skip, saying why, as
/// GoogleTest's `GTEST_SKIP() << e.what()` does: the place cannot run the test, which is
/// not the test failing. Nothing is left behind when it is thrown. A missing
/// redis-server is never Unsupported, but a plain std::runtime_error (redis_binary.hpp).
class Unsupported : public std::runtime_error {
 public:
  /// `why`: what is missing or refused, as what() says it.
  explicit Unsupported(const std::string& why) : std::runtime_error(why) {}
};

}  // namespace redlock::testing

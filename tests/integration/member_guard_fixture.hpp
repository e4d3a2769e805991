#pragma once
// The fixture of the member guard's integration tests: five real nodes, clients whose
// guard lasts a given longest ttl, and the steps that make a member lose its keys.

#include <chrono>
#include <initializer_list>

#include <redlock/redlock.hpp>

#include "support/lock_nodes_fixture.hpp"

namespace redlock::test {

class MemberGuardTest : public LockNodesTest {
 protected:
  static Options guarded(std::chrono::milliseconds longest_ttl) {
    auto opts = options(std::chrono::milliseconds(50));
    opts.member_guard.longest_ttl = longest_ttl;
    return opts;
  }

  // Connects `client` to every node and learns who they are, with a lock of its own.
  static void meet(Client& client) {
    auto lock = client.try_lock("guard:meet", std::chrono::seconds(1));
    ASSERT_TRUE(lock) << lock.error().message();
    ASSERT_TRUE(lock->unlock());
  }

  static void restart(std::initializer_list<std::size_t> nodes) {
    for (auto node : nodes) cluster()[node].kill9();
    for (auto node : nodes) cluster()[node].restart();
  }
};

}  // namespace redlock::test

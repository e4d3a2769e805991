#pragma once
// The fixture of the member guard's integration tests: five real nodes, clients whose
// guard lasts a given longest ttl, and the steps that make a member lose its keys.

#include <chrono>
#include <initializer_list>
#include <string>

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

  // Connects `client` to every node and learns who they are. A lock would not do: it
  // returns at its quorum-th reply, and a node whose connection was still being made
  // would be met for the first time after a restart the test makes, so its restart would
  // go unseen. An inspect waits for every node, and each connection's INFO is answered
  // before the commands sent after it.
  static void meet(Client& client) {
    ASSERT_TRUE(eventually(
        [&] {
          auto views = client.inspect("guard:meet");
          if (!views) return false;
          for (const auto& view : *views) {
            if (view.outcome.status == NodeStatus::pending || view.outcome.error) return false;
          }
          return true;
        },
        std::chrono::seconds(10)));
  }

  static void restart(std::initializer_list<std::size_t> nodes) {
    for (auto node : nodes) cluster()[node].kill9();
    for (auto node : nodes) cluster()[node].restart();
  }

  // True once `client` has reconnected to each of `nodes` and guards it. A client learns
  // of a restart on its reconnect, which its backoff paces (slower on a loaded machine);
  // an inspect asks every node, so it reconnects as soon as the backoff allows.
  static bool learns_restart_of(Client& client, std::initializer_list<std::size_t> nodes) {
    return eventually(
        [&] {
          auto views = client.inspect("guard:learn");
          if (!views) return false;
          for (auto node : nodes) {
            if ((*views)[node].guard.find("guarded for another") == std::string::npos) {
              return false;
            }
          }
          return true;
        },
        std::chrono::seconds(10));
  }
};

}  // namespace redlock::test

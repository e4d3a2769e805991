#pragma once
// A GoogleTest fixture for client-level tests: five real lock nodes and a sixth Redis
// as the application's storage, started once per test suite. Each test starts with
// every node running and empty, and leaves none stopped.

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <thread>

#include <redlock/client.hpp>
#include <redlock/options.hpp>
#include <redlock/testing/eventually.hpp>

#include "support/redis_server.hpp"

namespace redlock::test {

class LockNodesTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    cluster_ = new RedisCluster(5);
    storage_ = new RedisServer();
  }
  static void TearDownTestSuite() {
    delete cluster_;
    delete storage_;
    cluster_ = nullptr;
    storage_ = nullptr;
  }
  void SetUp() override {
    cluster_->resume_all_and_restart_dead();
    cluster_->flushall();
    storage_->command({"FLUSHALL"});
  }
  void TearDown() override { cluster_->resume_all_and_restart_dead(); }

  /// Client options for the five nodes; reconnects kept short so a restarted node is
  /// back in the quorum within a few milliseconds.
  static Options options(std::chrono::milliseconds node_timeout = std::chrono::milliseconds(0)) {
    Options options;
    options.nodes = cluster_->urls();
    options.node_timeout = node_timeout;
    options.reconnect_min = std::chrono::milliseconds(5);
    options.reconnect_max = std::chrono::milliseconds(50);
    return options;
  }

  /// Options whose retry timer cannot find a release sooner than 4 s (retry_delay 5 s,
  /// jitter 1 s): a waiter that gets a released lock sooner was woken by its announcement.
  static Options slow_polling() {
    auto slow = options();
    slow.retry_delay = std::chrono::seconds(5);
    slow.retry_jitter = std::chrono::seconds(1);
    return slow;
  }

  /// True once `check` holds, polled for up to `limit`. For a node's state right after an
  /// operation returned: it returns at its quorum-th reply, and the other nodes' replies
  /// (and their writes) may still be on their way on a loaded machine.
  static bool eventually(const std::function<bool()>& check,
                         std::chrono::milliseconds limit = std::chrono::seconds(2)) {
    return redlock::testing::eventually(check, limit, std::chrono::milliseconds(5));
  }

  /// Calls of the given commands (as INFO commandstats names them, e.g. "evalsha")
  /// served by all five lock nodes since they started, those run by scripts included.
  static long long calls(std::initializer_list<std::string_view> commands) {
    long long total = 0;
    for (std::size_t node = 0; node < cluster().size(); ++node) {
      const std::string info = cluster()[node].command({"INFO", "commandstats"}).str;
      for (std::string_view command : commands) {
        const std::string field = "cmdstat_" + std::string(command) + ":calls=";
        const auto at = info.find(field);
        if (at != std::string::npos) total += std::stoll(info.substr(at + field.size()));
      }
    }
    return total;
  }

  /// The value of `key` on lock node `node`, or "(nil)".
  static std::string get(std::size_t node, const std::string& key) {
    auto reply = (*cluster_)[node].command({"GET", key});
    return reply.is_nil() ? "(nil)" : reply.str;
  }

  /// client->lock(key) with a 10 s TTL, waiting at most 4 s, while another thread
  /// unlocks `held` (the current holder) `delay` after the call began and not before
  /// `refused()` returns (it blocks until the waiter's first attempt was refused). A release
  /// announced while that attempt is still on the wire wakes the waiter by its timer, so a
  /// test that asserts the announcement woke it must pass `refused`.
  static Result<Lock> lock_while_released(Client& client, const std::string& key, Lock& held,
                                          std::chrono::milliseconds delay,
                                          std::function<void()> refused = {}) {
    const auto release_at = std::chrono::steady_clock::now() + delay;
    std::thread releaser([&] {
      if (refused) refused();
      std::this_thread::sleep_until(release_at);
      (void)held.unlock();
    });
    LockOptions wait;
    wait.ttl = std::chrono::seconds(10);
    wait.wait = std::chrono::seconds(4);
    auto lock = client.lock(key, wait);
    releaser.join();
    return lock;
  }

  /// Whether `key` is gone from every lock node within `within`: a release is decided
  /// once a quorum confirmed it, and the other nodes follow a moment later.
  static bool gone_everywhere(const std::string& key,
                              std::chrono::milliseconds within = std::chrono::seconds(1)) {
    const auto deadline = std::chrono::steady_clock::now() + within;
    for (std::size_t node = 0; node < cluster_->size(); ++node) {
      while (get(node, key) != "(nil)") {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    return true;
  }

  static RedisCluster& cluster() { return *cluster_; }
  static RedisServer& storage() { return *storage_; }

 private:
  static inline RedisCluster* cluster_ = nullptr;
  static inline RedisServer* storage_ = nullptr;
};

}  // namespace redlock::test

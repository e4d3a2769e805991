// Interoperation with the npm `redlock` package (v5, over ioredis) on the same five real
// nodes: each side's lock excludes the other, neither side's release deletes the other's
// lock, and a key contended by our threads and a Node process is never held by both at
// once, also when our side is loops of the `redlock` CLI (a new client per section) and
// both sides must get a share. The Node side is npm_redlock_peer.js, run to completion.
//
// Skipped (with the reason) when `node` is not on PATH or the package is not installed:
// scripts/setup installs nodejs and npm and runs `npm ci` of bench/node into
// <build>/bench-node; $REDLOCK_NPM_MODULES names another node_modules directory.

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "support/lock_nodes_fixture.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

std::string npm_modules() {
  if (const char* dir = std::getenv("REDLOCK_NPM_MODULES"); dir && *dir) return dir;
  return REDLOCK_NPM_MODULES_DEFAULT;
}

/// Why the Node side cannot run here, or "" when it can.
std::string node_missing() {
  if (std::system("command -v node >/dev/null 2>&1") != 0) {
    return "node is not on PATH (scripts/setup installs nodejs and npm)";
  }
  const std::filesystem::path modules = npm_modules();
  for (const char* package : {"redlock", "ioredis"}) {
    if (!std::filesystem::exists(modules / package / "package.json")) {
      return std::string("the npm package ") + package + " is not installed in " +
             modules.string() +
             " (scripts/setup runs npm ci of bench/node there; or set REDLOCK_NPM_MODULES)";
    }
  }
  return "";
}

class InteropNpmTest : public test::LockNodesTest {
 protected:
  void SetUp() override {
    if (const auto why = node_missing(); !why.empty()) GTEST_SKIP() << why;
    LockNodesTest::SetUp();
  }

  /// Runs npm_redlock_peer.js against the five lock nodes and returns the last line it
  /// printed (stdout and stderr together; all of it goes into the failure message when
  /// it exits with an error).
  static std::string peer(const std::string& arguments) {
    std::string ports;
    for (std::size_t i = 0; i < cluster().size(); ++i) {
      ports += (i ? "," : "") + std::to_string(cluster()[i].port());
    }
    // Bounded, so that a peer that never ends fails this test with its output rather
    // than the suite at its timeout.
    const std::string command = "NODE_PATH='" + npm_modules() +
                                "' timeout --kill-after=5 120 node '" + REDLOCK_NPM_PEER_SCRIPT +
                                "' " + ports + " " + arguments + " 2>&1";
    FILE* pipe = ::popen(command.c_str(), "r");
    if (!pipe) return "popen failed";
    std::string output;
    char buffer[512];
    while (std::fgets(buffer, sizeof buffer, pipe)) output += buffer;
    const int status = ::pclose(pipe);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      ADD_FAILURE() << command << " failed:\n" << output;
      return "";
    }
    while (!output.empty() && output.back() == '\n') output.pop_back();
    return output.substr(output.rfind('\n') == std::string::npos ? 0 : output.rfind('\n') + 1);
  }

  /// The second word of `line` when its first is `word`, else "".
  static std::string after(const std::string& line, const std::string& word) {
    std::istringstream in(line);
    std::string first, second;
    in >> first >> second;
    return first == word ? second : "";
  }

  /// How many lock nodes hold `value` for `key`.
  static int holding(const std::string& key, const std::string& value) {
    int count = 0;
    for (std::size_t i = 0; i < cluster().size(); ++i) count += get(i, key) == value;
    return count;
  }
};

TEST_F(InteropNpmTest, OurLockRefusesNpm) {
  auto client = Client::create(options());
  auto lock = client->try_lock("interop:ours", 10s);
  ASSERT_TRUE(lock) << lock.error().message();
  const auto line = peer("acquire interop:ours 10000");
  EXPECT_NE(after(line, "refused"), "") << "npm redlock acquired a key we hold: " << line;
  // Its failed attempt released its own value only.
  EXPECT_EQ(holding("interop:ours", lock->value()), 5);
  EXPECT_TRUE(lock->unlock());
}

TEST_F(InteropNpmTest, NpmLockRefusesOursWithConflict) {
  const auto value = after(peer("acquire interop:npm 10000"), "acquired");
  ASSERT_NE(value, "");
  ASSERT_EQ(holding("interop:npm", value), 5);
  auto client = Client::create(options());
  auto lock = client->try_lock("interop:npm", 10s);
  ASSERT_FALSE(lock) << "we acquired a key npm redlock holds";
  EXPECT_EQ(lock.error(), errc::conflict) << lock.error().message();
  // Our failed attempt's clean-up did not touch npm's value.
  EXPECT_EQ(holding("interop:npm", value), 5);
}

TEST_F(InteropNpmTest, NpmReleaseWithItsOwnValueLeavesOurLock) {
  auto client = Client::create(options());
  auto lock = client->try_lock("interop:release", 10s);
  ASSERT_TRUE(lock) << lock.error().message();
  const auto line = peer("release interop:release 0123456789abcdef0123456789abcdef");
  EXPECT_EQ(after(line, "released"), "0") << line;
  EXPECT_EQ(holding("interop:release", lock->value()), 5);
  // And npm's release with our value (a process that took over our lock's identity)
  // does delete it: the two scripts agree on what the value means.
  EXPECT_EQ(after(peer("release interop:release " + lock->value()), "released"), "5");
  EXPECT_EQ(holding("interop:release", lock->value()), 0);
}

TEST_F(InteropNpmTest, OurReleaseWithAWrongValueLeavesNpmsLock) {
  const auto value = after(peer("acquire interop:theirs 10000"), "acquired");
  ASSERT_NE(value, "");
  auto client = Client::create(options());
  const auto released = client->release("interop:theirs", "0123456789abcdef0123456789abcdef");
  ASSERT_FALSE(released) << "a release with another value reported success";
  EXPECT_EQ(released.error(), errc::not_held) << released.error().message();
  EXPECT_EQ(holding("interop:theirs", value), 5);
  // Released with npm's own value, the key is free for us.
  EXPECT_TRUE(client->release("interop:theirs", value));
  EXPECT_TRUE(client->try_lock("interop:theirs", 10s));
}

TEST_F(InteropNpmTest, MixedContentionNeverOverlaps) {
  // Two of our threads and one Node process take turns on one key for about 3 s. Each critical
  // section is a racy read-modify-write of a counter on the sixth Redis (GET, 2 ms,
  // SET + 1): two holders at once lose an increment, so the final counter equals the
  // sections both sides report only if no two ever overlapped.
  constexpr int threads = 2;
  constexpr auto run_for = 3s;
  const std::string counter_port = std::to_string(storage().port());
  // Node deadlines well above a loaded machine's stalls: this test is about overlap.
  auto client = Client::create(options(150ms));
  auto node_side = std::async(std::launch::async, [&] {
    return peer("contend interop:mixed 500 " +
                std::to_string(std::chrono::seconds(run_for).count()) + " " + counter_port);
  });
  std::atomic<int> ours{0};
  std::atomic<int> failed{0};  // lock() gave up (wait over) or unlock() failed: not unsafe
  const auto deadline = Clock::now() + run_for;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&] {
      while (Clock::now() < deadline) {
        auto lock = client->lock("interop:mixed", {.ttl = 500ms, .wait = 2s});
        if (!lock) {
          ++failed;
          continue;
        }
        const auto read = storage().command({"GET", "counter"});
        const long long value = read.is_nil() ? 0 : std::stoll(read.str);
        std::this_thread::sleep_for(2ms);
        storage().command({"SET", "counter", std::to_string(value + 1)});
        ++ours;
        if (!lock->unlock()) ++failed;
        // Our waiters are woken by our releases, npm redlock polls: a pause leaves it
        // turns, so that both sides really contend.
        std::this_thread::sleep_for(30ms);
      }
    });
  }
  for (auto& worker : workers) worker.join();
  const auto line = node_side.get();
  const auto theirs_text = after(line, "sections");
  ASSERT_NE(theirs_text, "") << line;
  const int theirs = std::stoi(theirs_text);
  const auto counter = storage().command({"GET", "counter"});
  ASSERT_FALSE(counter.is_nil());
  EXPECT_EQ(std::stoll(counter.str), ours + theirs)
      << "critical sections overlapped: ours " << ours << ", npm redlock's " << theirs;
  std::printf("critical sections: ours %d, npm redlock's %d; our failed calls %d\n", ours.load(),
              theirs, failed.load());
  EXPECT_GT(ours, 0);
  EXPECT_GT(theirs, 0);
}

#ifdef REDLOCK_CLI
TEST_F(InteropNpmTest, OurCliLoopsAndNpmProcessesShareOneKey) {
  // Three loops of `redlock run --wait`, a new client per section as cron runs them, and
  // three Node processes on one key for 6 s, every section the same racy increment of a
  // counter on the sixth Redis. npm redlock keeps a failed attempt's entries until they
  // expire and polls; ours wait for announcements and retry the moment such entries
  // leave a quorum free. The counter must equal the sections of both (no overlap), and
  // our short-lived clients must not starve. How the turns divide swings widely from run
  // to run (bench/mixed-fleet measures it: docs/performance-history.md), so it is printed, not
  // judged here.
  constexpr int loops = 3;
  constexpr auto run_for = 6s;
  const std::string counter_port = std::to_string(storage().port());
  std::string nodes;
  for (const auto& url : cluster().urls()) nodes += (nodes.empty() ? "" : ",") + url;
  const std::string section = "v=$(redis-cli -p " + counter_port +
                              " GET counter); sleep 0.002; redis-cli -p " + counter_port +
                              " SET counter $((${v:-0}+1)) >/dev/null";
  const std::string run =
      "REDLOCK_NODES='" + nodes + "' '" + REDLOCK_CLI +
      "' --no-guard-young-members run --quiet --ttl 3s --wait 10s interop:fleet -- sh -c '" +
      section + "'";
  std::vector<std::future<std::string>> npm;
  for (int i = 0; i < loops; ++i) {
    npm.push_back(std::async(std::launch::async, [&] {
      return peer("contend interop:fleet 3000 " +
                  std::to_string(std::chrono::seconds(run_for).count()) + " " + counter_port);
    }));
  }
  std::atomic<int> ours{0};
  std::atomic<int> failed{0};
  const auto deadline = Clock::now() + run_for;
  std::vector<std::thread> shells;
  for (int i = 0; i < loops; ++i) {
    shells.emplace_back([&] {
      while (Clock::now() < deadline) {
        if (std::system(run.c_str()) == 0) {
          ++ours;
        } else {
          ++failed;
        }
      }
    });
  }
  for (auto& shell : shells) shell.join();
  int theirs = 0;
  for (auto& side : npm) {
    const auto line = side.get();
    const auto count = after(line, "sections");
    ASSERT_NE(count, "") << line;
    theirs += std::stoi(count);
  }
  std::printf("critical sections: ours %d (%d runs failed), npm redlock's %d\n", ours.load(),
              failed.load(), theirs);
  const auto counter = storage().command({"GET", "counter"});
  ASSERT_FALSE(counter.is_nil());
  EXPECT_EQ(std::stoll(counter.str), ours + theirs) << "critical sections overlapped";
  EXPECT_GT(ours, 0) << "npm redlock's " << theirs;
}
#endif

}  // namespace
}  // namespace redlock

// Short-lived clients on one key, as a cron fleet runs them: eight loops of `redlock run
// --wait`, each run a new process and so a new client that meets every node anew, with
// all five nodes healthy, then with one paused (silent: the kernel still accepts the
// connection, nothing answers) and with one killed (refused at once). A node down must
// stop neither the lock nor its fairness: each faulty phase keeps at least half the
// critical sections of the healthy phase measured beside it, no run fails, and no two
// sections overlap (each section takes a directory that only one process can create).
//
// Throughput is a ratio of phases run side by side on the same machine, not a time bound;
// before contenders gave up on a silent node's vote the paused phase made 0-5 sections
// against about 180.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "cli/cli_process.hpp"
#include "support/redis_server.hpp"

namespace redlock::test {
namespace {

using namespace std::chrono_literals;

struct Phase {
  int sections = 0;
  int library_sections = 0;  // of the long-lived client's threads, when the phase has them
  int failed_runs = 0;
  int overlaps = 0;
  std::string first_failure;
};

class CliContentionTest : public ::testing::Test {
 protected:
  static constexpr int loops = 8;
  static constexpr auto phase_length = 4s;

  void SetUp() override {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "redlock-contention-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }

  void TearDown() override {
    cluster_.resume_all_and_restart_dead();
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

  std::string nodes() const {
    std::string list;
    for (const auto& url : cluster_.urls()) list += (list.empty() ? "" : ",") + url;
    return list;
  }

  // Runs the loops for one phase on the key `key`: `cli_loops` of the CLI and, beside
  // them, `library_threads` threads of one long-lived client of this process taking the
  // same key with the same section.
  Phase run_phase(const std::string& key, int cli_loops = loops, int library_threads = 0) {
    const auto phase_dir = dir_ + "/" + key;
    std::filesystem::create_directories(phase_dir);
    // The section: take a directory nobody else may hold (mkdir is atomic), count, hold
    // 20 ms, give it back. A second holder's mkdir fails and is counted as an overlap.
    const auto section = "mkdir '" + phase_dir + "/in' 2>/dev/null || echo x >> '" + phase_dir +
                         "/overlaps'; echo x >> '" + phase_dir + "/sections'; sleep 0.02; rmdir '" +
                         phase_dir + "/in'";
    const std::vector<std::string> args{"--nodes", nodes(), "--no-guard-young-members",
                                        "run",     "--ttl", "3s",
                                        "--wait",  "20s",   key,
                                        "--",      "sh",    "-c",
                                        section};
    std::atomic<int> failed{0};
    std::atomic<int> library_sections{0};
    std::vector<std::string> failures(static_cast<std::size_t>(cli_loops + library_threads));
    const auto end = std::chrono::steady_clock::now() + phase_length;
    std::vector<std::thread> threads;
    std::shared_ptr<Client> client;
    if (library_threads > 0) {
      Options options;
      options.nodes = cluster_.urls();
      client = Client::create(options);
    }
    for (int i = 0; i < library_threads; ++i) {
      threads.emplace_back([&, i] {
        while (std::chrono::steady_clock::now() < end) {
          auto lock = client->lock(key, {.ttl = 3s, .wait = 20s});
          if (!lock) {
            ++failed;
            failures[static_cast<std::size_t>(cli_loops + i)] = lock.error().message();
            continue;
          }
          ++library_sections;
          if (std::system(section.c_str()) != 0) ++failed;
          (void)lock->unlock();
        }
      });
    }
    for (int i = 0; i < cli_loops; ++i) {
      threads.emplace_back([&, i] {
        while (std::chrono::steady_clock::now() < end) {
          const auto result = run_cli(args, {}, 60s);
          if (result.exit_code != 0) {
            ++failed;
            if (failures[static_cast<std::size_t>(i)].empty()) {
              failures[static_cast<std::size_t>(i)] = result.err;
            }
          }
        }
      });
    }
    for (auto& thread : threads) thread.join();
    Phase phase;
    phase.sections = count_lines(phase_dir + "/sections");
    phase.overlaps = count_lines(phase_dir + "/overlaps");
    phase.failed_runs = failed.load();
    phase.library_sections = library_sections.load();
    for (const auto& failure : failures) {
      if (!failure.empty()) phase.first_failure = failure;
    }
    return phase;
  }

  static int count_lines(const std::string& file) {
    std::ifstream in(file);
    int n = 0;
    for (std::string line; std::getline(in, line);) ++n;
    return n;
  }

  static void report(const char* name, const Phase& phase) {
    std::printf("%-16s %4d sections, %d failed runs, %d overlaps\n", name, phase.sections,
                phase.failed_runs, phase.overlaps);
  }

  RedisCluster cluster_{5};
  std::string dir_;
};

TEST_F(CliContentionTest, EightShortLivedLoopsKeepHalfTheirPaceWithOneNodePausedOrKilled) {
  const auto healthy = run_phase("healthy");
  report("healthy", healthy);

  cluster_[1].pause();
  const auto paused = run_phase("paused");
  cluster_[1].resume();
  report("node 2 paused", paused);

  cluster_[3].kill9();
  const auto killed = run_phase("killed");
  report("node 4 killed", killed);

  for (const auto* phase : {&healthy, &paused, &killed}) {
    EXPECT_EQ(phase->overlaps, 0);
    EXPECT_EQ(phase->failed_runs, 0) << phase->first_failure;
  }
  ASSERT_GT(healthy.sections, 0);
  EXPECT_GE(2 * paused.sections, healthy.sections)
      << "paused " << paused.sections << " vs healthy " << healthy.sections;
  EXPECT_GE(2 * killed.sections, healthy.sections)
      << "killed " << killed.sections << " vs healthy " << healthy.sections;
}

TEST_F(CliContentionTest, CliLoopsAndALongLivedClientShareOneKeyWithANodePaused) {
  // A mixed fleet: four CLI loops (new clients, meeting the paused node anew each time)
  // and four threads of one long-lived client of the library (which learns the node is
  // silent), healthy and then with a node paused. The long-lived client hands the key
  // from one of its threads to the next in one round trip (README, "Long work and
  // waiting"), so it takes nearly every turn (about 104 of 108 sections, healthy or
  // not); what a node down must not do is fail a run or slow the fleet below half its
  // healthy pace.
  const auto healthy = run_phase("mixed-healthy", 4, 4);
  cluster_[1].pause();
  const auto paused = run_phase("mixed-paused", 4, 4);
  cluster_[1].resume();
  for (const auto* phase : {&healthy, &paused}) {
    std::printf("mixed, %s: %d sections, %d of them the library's, %d failed, %d overlaps\n",
                phase == &healthy ? "healthy" : "node 2 paused", phase->sections,
                phase->library_sections, phase->failed_runs, phase->overlaps);
    EXPECT_EQ(phase->overlaps, 0);
    EXPECT_EQ(phase->failed_runs, 0) << phase->first_failure;
    EXPECT_GT(phase->library_sections, 0) << "the library's threads starved";
  }
  EXPECT_GE(2 * paused.sections, healthy.sections);
}

}  // namespace
}  // namespace redlock::test

// redlock-memory-soak: the client's resident memory over a long run, while some nodes
// hang. T threads lock and unlock keys of their own through the synchronous API for
// --duration seconds, with the first --pause nodes stopped (SIGSTOP) from the start;
// every --every seconds one JSON line on stdout says how much memory the process holds
// (VmRSS), how much of it malloc holds and how much of that is in use (mallinfo2: the
// rest is free memory malloc keeps), and how many cycles it made. Nothing but the client
// allocates in the window: no samples are kept, so a rising line is the client's (or
// its malloc's).
//
//   redlock-memory-soak --nodes URL,... --threads 16 --pause 1 --duration 900 --every 30

#include <malloc.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <exception>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "node_pauser.hpp"
#include "redis_admin.hpp"

namespace {

using namespace std::chrono_literals;

struct SoakConfig {
  std::vector<std::string> nodes;
  int threads = 16;
  int pause = 1;
  int duration_s = 120;
  int every_s = 10;
  redlock::SyncCalls sync_calls = redlock::SyncCalls::lead;
};

long resident_kb() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return -1;
}

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> parts;
  std::stringstream stream(list);
  for (std::string part; std::getline(stream, part, ',');) {
    if (!part.empty()) parts.push_back(part);
  }
  return parts;
}

int soak(const SoakConfig& config) {
  std::vector<pid_t> pids;
  for (int n = 0; n < config.pause; ++n) {
    pids.push_back(redlock_bench::RedisAdmin(config.nodes[static_cast<std::size_t>(n)]).pid());
  }
  redlock::Options options;
  options.nodes = config.nodes;
  options.sync_calls = config.sync_calls;
  auto client = redlock::Client::create(options);

  redlock_bench::NodePauser pauser;
  pauser.pause(pids);
  std::atomic<bool> stop{false};
  std::atomic<long> cycles{0};
  std::atomic<long> failed{0};
  std::vector<std::thread> workers;
  const std::string prefix = "soak:" + std::to_string(::getpid()) + ":";
  for (int t = 0; t < config.threads; ++t) {
    workers.emplace_back([&, own = prefix + std::to_string(t) + ":"] {
      // A few keys per thread, in turn: the release of one is still on its way to the
      // hung nodes when the next is taken.
      for (long i = 0; !stop.load(std::memory_order_relaxed); ++i) {
        auto lock = client->try_lock(own + std::to_string(i % 8), 1s);
        if (lock && lock->unlock()) {
          cycles.fetch_add(1, std::memory_order_relaxed);
        } else {
          failed.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
  }
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t <= config.duration_s; t += config.every_s) {
    std::this_thread::sleep_until(start + std::chrono::seconds(t));
    nlohmann::ordered_json line;
    line["bench"] = "redlock-memory-soak";
    line["sync_calls"] = config.sync_calls == redlock::SyncCalls::lead ? "lead" : "hand_off";
    line["threads"] = config.threads;
    line["paused"] = config.pause;
    line["t_s"] = t;
    line["rss_kb"] = resident_kb();
    const struct mallinfo2 heap = ::mallinfo2();
    line["malloc_held_kb"] = (heap.arena + heap.hblkhd) / 1024;
    line["malloc_in_use_kb"] = (heap.uordblks + heap.hblkhd) / 1024;
    line["cycles"] = cycles.load();
    line["failed"] = failed.load();
    std::printf("%s\n", line.dump().c_str());
    std::fflush(stdout);
  }
  stop = true;
  for (auto& worker : workers) worker.join();
  pauser.resume();
  client->close();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The client's resident memory over a long run while nodes hang"};
  SoakConfig config;
  std::string nodes;
  app.add_option("--nodes", nodes, "Comma-separated redis:// URLs of standalone nodes")->required();
  app.add_option("--threads", config.threads, "Threads that lock and unlock")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--pause", config.pause, "The first P nodes are stopped (SIGSTOP) throughout")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  app.add_option("--duration", config.duration_s, "Seconds")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  app.add_option("--every", config.every_s, "Seconds between two lines")
      ->check(CLI::Range(1, 86400))
      ->capture_default_str();
  std::string sync_calls = "lead";
  app.add_option("--sync-calls", sync_calls, "Options::sync_calls: lead or hand_off")
      ->check(CLI::IsMember({"lead", "hand_off"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  config.nodes = split(nodes);
  config.sync_calls =
      sync_calls == "hand_off" ? redlock::SyncCalls::hand_off : redlock::SyncCalls::lead;
  if (static_cast<std::size_t>(config.pause) >= config.nodes.size()) {
    std::fprintf(stderr, "redlock-memory-soak: --pause %d leaves no node of %zu answering\n",
                 config.pause, config.nodes.size());
    return 2;
  }
  try {
    return soak(config);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "redlock-memory-soak: %s\n", e.what());
    return 1;
  }
}

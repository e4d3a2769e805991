// A service that watches its own locks: an Observer on the client counts attempts by
// outcome, waits and node events, and a reporter thread prints a live summary once a
// second while worker threads contend for a few keys.
//
//   observed-service --nodes redis://127.0.0.1:7101,... [--seconds N] [--workers N]
//
// Kill a node (or SIGSTOP it) while it runs: the summary shows it down, the attempts
// that failed because of it, and the reconnect when it comes back.

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

using namespace std::chrono_literals;

namespace {

/// Called on the client's loop thread: it only counts (atomics and one small map under a
/// mutex), never blocks, so it cannot slow the locks down.
class Summary final : public redlock::Observer {
 public:
  void on_attempt(const redlock::AttemptEvent& event) override {
    outcomes_[static_cast<int>(event.outcome)].fetch_add(1, std::memory_order_relaxed);
    latency_us_.fetch_add(event.latency.count(), std::memory_order_relaxed);
  }
  void on_wake(const redlock::WakeEvent& event) override {
    (event.cause == redlock::WakeCause::announcement ? woken_by_release_ : woken_by_timer_)
        .fetch_add(1, std::memory_order_relaxed);
  }
  void on_watchdog(const redlock::WatchdogEvent& event) override {
    if (event.lost) lost_.fetch_add(1, std::memory_order_relaxed);
  }
  void on_node(const redlock::NodeEvent& event) override {
    std::lock_guard lock(mutex_);
    auto& node = nodes_[std::string(event.node)];
    switch (event.kind) {
      case redlock::NodeEventKind::connected:
      case redlock::NodeEventKind::reconnected:
        node.up = true;
        node.reconnects += event.kind == redlock::NodeEventKind::reconnected;
        break;
      case redlock::NodeEventKind::down:
      case redlock::NodeEventKind::connect_failed:
        node.up = false;
        node.cause = std::string(event.detail);
        break;
      default:
        break;
    }
  }

  /// One block of text; called by the reporter thread.
  std::string report() {
    std::ostringstream out;
    long long total = 0;
    out << "attempts:";
    for (int i = 0; i < 5; ++i) {
      const auto n = outcomes_[i].load(std::memory_order_relaxed);
      total += n;
      out << ' ' << redlock::to_string(static_cast<redlock::AttemptOutcome>(i)) << '=' << n;
    }
    out << "  mean latency "
        << (total > 0 ? latency_us_.load(std::memory_order_relaxed) / total : 0) << " us"
        << "  woken by release=" << woken_by_release_.load() << " timer=" << woken_by_timer_.load()
        << "  lost=" << lost_.load() << '\n';
    std::lock_guard lock(mutex_);
    for (const auto& [url, node] : nodes_) {
      out << "  " << url << ": " << (node.up ? "up" : "DOWN (" + node.cause + ")")
          << ", reconnects " << node.reconnects << '\n';
    }
    return out.str();
  }

 private:
  struct Node {
    bool up = false;
    int reconnects = 0;
    std::string cause;
  };
  std::atomic<long long> outcomes_[5] = {};
  std::atomic<long long> latency_us_{0};
  std::atomic<long long> woken_by_release_{0};
  std::atomic<long long> woken_by_timer_{0};
  std::atomic<long long> lost_{0};
  std::mutex mutex_;
  std::map<std::string, Node> nodes_;
};

}  // namespace

int main(int argc, char** argv) {
  std::string nodes;
  int seconds = 10;
  int workers = 8;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--nodes") == 0) nodes = argv[i + 1];
    if (std::strcmp(argv[i], "--seconds") == 0) seconds = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--workers") == 0) workers = std::atoi(argv[i + 1]);
  }
  if (nodes.empty()) {
    std::fprintf(stderr, "usage: %s --nodes URL,URL,... [--seconds N] [--workers N]\n", argv[0]);
    return 2;
  }
  redlock::Options options;
  std::stringstream list(nodes);
  for (std::string url; std::getline(list, url, ',');) options.nodes.push_back(url);
  auto summary = std::make_shared<Summary>();
  options.observer = summary;
  // The operator's log: warnings (a node down, a lost lock) go to stderr as they happen.
  options.log_level = redlock::LogLevel::warning;
  options.log = [](redlock::LogLevel level, std::string_view line) {
    std::fprintf(stderr, "%s: %.*s\n", redlock::to_string(level), static_cast<int>(line.size()),
                 line.data());
  };
  auto client = redlock::Client::create(options);

  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      redlock::LockOptions lock_options;
      lock_options.ttl = 2s;
      lock_options.wait = 1s;
      lock_options.auto_extend = true;
      const auto key = "observed:" + std::to_string(w % 3);
      while (!stop.load()) {
        auto lock = client->lock(key, lock_options);
        if (lock) std::this_thread::sleep_for(5ms);  // the work under the lock
      }
    });
  }
  for (int s = 1; s <= seconds; ++s) {
    std::this_thread::sleep_for(1s);
    std::printf("--- %d s\n%s", s, summary->report().c_str());
    std::fflush(stdout);
  }
  stop = true;
  for (auto& thread : threads) thread.join();
}

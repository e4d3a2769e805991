// redlock-chaos-worker: one client process of a chaos scenario. Its threads contend for a
// few keys through the public API (redlock::Client, one per process, shared by the
// threads), write to a FencedStore inside each critical section, and log every attempt,
// hold and write as event records for the safety checker (checker/README.md).
//
//   redlock-chaos-worker --nodes URL,URL,... --store URL --events FILE [--id NAME]
//       [--threads 4] [--keys 2] [--duration 10s] [--ttl 1s] [--wait 1s] [--hold 20ms]
//       [--stall-every N] [--stall 1500ms] [--node-timeout 0] [--prefix chaos:] [--seed N]
//       [--foreign-threads 0] [--unfenced-every 0]
//
// --foreign-threads adds threads that lock the same keys as another Redlock client would
// (worker/foreign_client.hpp): they never announce their releases.
//
// Each critical section: one fenced write at once, then the hold (or, every Nth time per
// thread with --stall-every, a stall longer than the validity, as a paused holder would
// do), then a second fenced write, then unlock. The second write after a stall is the one
// fencing has to refuse once someone else has taken the lock. With --unfenced-every N,
// every Nth critical section of a thread locks without fencing (on Redis 7 that acquire
// is a plain SET instead of the script) and makes no fenced write: its hold is checked
// for overlaps like any other, without a token.
//
// Exits after --duration, or on SIGTERM/SIGINT once the running critical sections end.

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "common/duration.hpp"
#include "worker/event_log.hpp"
#include "worker/foreign_client.hpp"

namespace {

using namespace redlock::chaos;
using std::chrono::milliseconds;

std::atomic<bool> stop_requested{false};

struct Config {
  std::vector<std::string> nodes;
  std::string store;
  std::string events;
  std::string id = "worker";
  int threads = 4;
  int keys = 2;
  milliseconds duration{10'000};
  milliseconds ttl{1000};
  milliseconds wait{1000};
  milliseconds hold{20};
  int stall_every = 0;
  milliseconds stall{0};  // 0: 1.5 x ttl
  milliseconds node_timeout{0};
  std::string prefix = "chaos:";
  unsigned seed = 1;
  int foreign_threads = 0;
  int unfenced_every = 0;
};

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "redlock-chaos-worker: " << why
            << "\nusage: redlock-chaos-worker --nodes URL,... --store URL --events FILE [--id NAME]"
               " [--threads N] [--keys N] [--duration D] [--ttl D] [--wait D] [--hold D]"
               " [--stall-every N] [--stall D] [--node-timeout D] [--prefix P] [--seed N]"
               " [--foreign-threads N] [--unfenced-every N]\n";
  std::exit(2);
}

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(separator, start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) out.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

Config parse(int argc, char** argv) {
  Config c;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) usage("missing value for " + std::string(flag));
    const std::string value = argv[++i];
    auto duration = [&] {
      auto d = parse_duration(value);
      if (!d) usage("bad duration for " + std::string(flag) + ": " + value);
      return *d;
    };
    auto count = [&] {
      try {
        return std::stoi(value);
      } catch (const std::exception&) {
        usage("bad number for " + std::string(flag) + ": " + value);
      }
    };
    if (flag == "--nodes") {
      c.nodes = split(value, ',');
    } else if (flag == "--store") {
      c.store = value;
    } else if (flag == "--events") {
      c.events = value;
    } else if (flag == "--id") {
      c.id = value;
    } else if (flag == "--threads") {
      c.threads = count();
    } else if (flag == "--keys") {
      c.keys = count();
    } else if (flag == "--duration") {
      c.duration = duration();
    } else if (flag == "--ttl") {
      c.ttl = duration();
    } else if (flag == "--wait") {
      c.wait = duration();
    } else if (flag == "--hold") {
      c.hold = duration();
    } else if (flag == "--stall-every") {
      c.stall_every = count();
    } else if (flag == "--stall") {
      c.stall = duration();
    } else if (flag == "--node-timeout") {
      c.node_timeout = duration();
    } else if (flag == "--prefix") {
      c.prefix = value;
    } else if (flag == "--foreign-threads") {
      c.foreign_threads = count();
    } else if (flag == "--unfenced-every") {
      c.unfenced_every = count();
    } else if (flag == "--seed") {
      c.seed = static_cast<unsigned>(count());
    } else {
      usage("unknown option " + std::string(flag));
    }
  }
  if (c.nodes.empty() || c.store.empty() || c.events.empty()) {
    usage("--nodes, --store and --events are required");
  }
  if (c.threads < 1 || c.keys < 1) usage("--threads and --keys must be positive");
  if (c.stall.count() == 0) c.stall = c.ttl * 3 / 2;
  return c;
}

// The checker groups errors by these names.
std::string code_name(std::error_code code) {
  if (code.category() != redlock::category()) return code.message();
  switch (static_cast<redlock::errc>(code.value())) {
    case redlock::errc::conflict:
      return "conflict";
    case redlock::errc::quorum_unreachable:
      return "quorum_unreachable";
    case redlock::errc::validity_expired:
      return "validity_expired";
    case redlock::errc::timeout:
      return "timeout";
    case redlock::errc::cancelled:
      return "cancelled";
    case redlock::errc::invalid_argument:
      return "invalid_argument";
    case redlock::errc::connection_error:
      return "connection_error";
    case redlock::errc::protocol_error:
      return "protocol_error";
    case redlock::errc::auth_error:
      return "auth_error";
    case redlock::errc::redis_error:
      return "redis_error";
    case redlock::errc::not_held:
      return "not_held";
    case redlock::errc::lock_lost:
      return "lock_lost";
    case redlock::errc::stale_token:
      return "stale_token";
    case redlock::errc::overloaded:
      return "overloaded";
    case redlock::errc::tls_error:
      return "tls_error";
    case redlock::errc::wrong_kind:
      return "wrong_kind";
    case redlock::errc::hold_limit_reached:
      return "hold_limit_reached";
  }
  return code.message();
}

std::int64_t to_ns(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// Sleeps, but wakes early when the worker is asked to stop.
void sleep_for(milliseconds duration) {
  const auto until = std::chrono::steady_clock::now() + duration;
  while (!stop_requested && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        until - std::chrono::steady_clock::now(), milliseconds(20)));
  }
}

class Worker {
 public:
  Worker(const Config& config, redlock::Client& client, redlock::FencedStore& store, EventLog& log)
      : config_(config), client_(client), store_(store), log_(log) {}

  void run(int thread) {
    const std::string name = config_.id + "." + std::to_string(thread);
    std::mt19937 random(config_.seed * 7919u + static_cast<unsigned>(thread));
    std::uniform_int_distribution<int> pick(0, config_.keys - 1);
    const auto deadline = std::chrono::steady_clock::now() + config_.duration;
    int holds = 0;
    int sections = 0;
    while (!stop_requested && std::chrono::steady_clock::now() < deadline) {
      const std::string key = config_.prefix + std::to_string(pick(random));
      redlock::LockOptions options;
      options.ttl = config_.ttl;
      options.wait = config_.wait;
      options.fencing = config_.unfenced_every <= 0 || ++sections % config_.unfenced_every != 0;
      auto result = client_.lock(key, options);
      const std::int64_t at = monotonic_ns();
      if (!result) {
        const bool conflict = result.error() == redlock::errc::conflict;
        log_.append(AttemptEvent{key, name,
                                 conflict ? AttemptResult::conflict : AttemptResult::error,
                                 conflict ? "" : code_name(result.code()), at});
        // Errors come back at once while nodes are down; do not spin on them.
        if (!conflict) sleep_for(milliseconds(20));
        continue;
      }
      log_.append(AttemptEvent{key, name, AttemptResult::acquired, "", at});
      redlock::Lock& lock = *result;
      const std::optional<std::uint64_t> token = lock.fencing_token();
      const std::int64_t valid_until = to_ns(lock.valid_until());

      if (token) fenced_write(name, key, *token, lock.value());
      const bool stall = config_.stall_every > 0 && ++holds % config_.stall_every == 0;
      sleep_for(stall ? config_.stall : config_.hold);
      if (token) fenced_write(name, key, *token, lock.value());

      // The holder stops relying on the lock here, or its validity ended earlier.
      const std::int64_t released = monotonic_ns();
      log_.append(HoldEvent{key, name, lock.value(), at, std::min(valid_until, released), token});
      (void)lock.unlock();
    }
  }

 private:
  void fenced_write(const std::string& name, const std::string& key, std::uint64_t token,
                    const std::string& value) {
    const std::int64_t start = monotonic_ns();
    auto written = store_.write(key, token, "data:" + key, value);
    const std::int64_t end = monotonic_ns();
    const bool stale = !written && written.error() == redlock::errc::stale_token;
    log_.append(WriteEvent{key, name, token, static_cast<bool>(written), stale, start, end});
  }

  const Config& config_;
  redlock::Client& client_;
  redlock::FencedStore& store_;
  EventLog& log_;
};

}  // namespace

int main(int argc, char** argv) {
  const Config config = parse(argc, argv);
  struct sigaction on_stop {};
  on_stop.sa_handler = [](int) { stop_requested = true; };
  ::sigaction(SIGTERM, &on_stop, nullptr);
  ::sigaction(SIGINT, &on_stop, nullptr);

  try {
    EventLog log(config.events);
    redlock::Options options;
    options.nodes = config.nodes;
    options.node_timeout = config.node_timeout;
    // A restarted node should rejoin within milliseconds, not after a long backoff.
    options.reconnect_min = milliseconds(5);
    options.reconnect_max = milliseconds(100);
    auto client = redlock::Client::create(options);
    auto store = redlock::FencedStore::create(config.store);
    Worker worker(config, *client, *store, log);
    std::vector<std::thread> threads;
    for (int t = 0; t < config.threads; ++t) threads.emplace_back([&worker, t] { worker.run(t); });
    ForeignSettings foreign{config.nodes, config.prefix, config.keys,     config.ttl,
                            config.wait,  config.hold,   config.duration, config.seed};
    for (int t = 0; t < config.foreign_threads; ++t) {
      threads.emplace_back([&foreign, &log, &config, t] {
        ForeignSettings mine = foreign;
        mine.seed = config.seed * 104729u + static_cast<unsigned>(t);
        run_foreign_client(mine, config.id + ".foreign" + std::to_string(t), log, stop_requested);
      });
    }
    for (auto& thread : threads) thread.join();
    client->close();
  } catch (const std::exception& error) {
    std::cerr << "redlock-chaos-worker: " << error.what() << "\n";
    return 1;
  }
  return 0;
}

// redlock-chaos-worker: one client process of a chaos scenario. Its threads contend for a
// few keys through the public API (redlock::Client, one per process, shared by the
// threads), write to a FencedStore inside each critical section that carries a fencing
// token, and log every attempt, hold and write as event records for the safety checker
// (checker/README.md).
//
//   redlock-chaos-worker --nodes URL,URL,... --store URL --events FILE [--id NAME]
//       [--threads 4] [--keys 2] [--duration 10s] [--ttl 1s] [--wait 1s] [--hold 20ms]
//       [--stall-every N] [--stall 1500ms] [--node-timeout 0] [--prefix chaos:] [--seed N]
//       [--foreign-threads 0] [--primitive exclusive|rw|semaphore|multi|mix|election]
//       [--permits 2] [--unsafe-permit-quorum Q] [--unsafe-election-quorum Q]
//       [--unfenced-every 0] [--member-guard on|off] [--replicas-to-ack R] [--quorum Q]
//       [--allow-two-masters on|off]
//
// --primitive picks what the threads take (each primitive on keys of its own, as a key
// serves one kind of lock): exclusive locks with fencing (half of them, at random, held
// through a ReentrantLock that is entered twice); rw, readers and fenced writers of
// read-write locks; semaphore, one of --permits permits; multi, lock_all() with fencing of
// several of the exclusive locks' keys (each key's store written with that key's own
// token, so set and single-key tokens meet in one store); mix, any of these, drawn anew
// for every critical section; election, leader elections instead of critical sections:
// each thread is a candidate with a client of its own (worker/election_candidates.hpp).
//
// --unsafe-permit-quorum is TEST ONLY: permits are then granted by Q nodes, below the
// safe quorum, which lets K+1 holders coexist (worker/lowered_permit_quorum.hpp). The
// chaos suite uses it to show that the checker catches them. --unsafe-election-quorum,
// TEST ONLY too, does the same to the candidates' campaigns: two leaders at once
// (worker/lowered_election_quorum.hpp).
//
// --foreign-threads adds threads that lock the exclusive keys as another Redlock client
// would (worker/foreign_client.hpp): they never announce their releases.
//
// Each critical section: one fenced write at once (with a token), then the hold (or,
// every Nth time per thread with --stall-every, a stall longer than the validity, as a
// paused holder would do), then a second fenced write, then unlock. The second write
// after a stall is the one fencing has to refuse once someone else has taken the lock.
// With --unfenced-every N, every Nth exclusive lock of a thread is taken without fencing
// (on Redis 7 that acquire is a plain SET instead of the script) and makes no fenced
// write: its hold is checked for overlaps like any other, without a token.
//
// Exits after --duration, or on SIGTERM/SIGINT once the running critical sections end.

#include <signal.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "common/command_line.hpp"
#include "worker/code_name.hpp"
#include "worker/election_candidates.hpp"
#include "worker/event_log.hpp"
#include "worker/foreign_client.hpp"
#include "worker/lowered_permit_quorum.hpp"

namespace {

using namespace redlock::chaos;
using std::chrono::milliseconds;

std::atomic<bool> stop_requested{false};

enum class Load { exclusive, rw, semaphore, multi, mix, election };

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
  Load load = Load::exclusive;
  int permits = 2;
  int unsafe_permit_quorum = 0;    // 0: the safe one
  int unsafe_election_quorum = 0;  // 0: a majority, through Election
  int unfenced_every = 0;
  // Options::member_guard for restarts the client observes; the fleet's longest ttl is
  // the workers' own ttl.
  bool member_guard = true;
  // Options::member_guard.replicas_to_ack (0: no WAIT).
  int replicas_to_ack = 0;
  // Options::quorum (0: a majority).
  int quorum = 0;
  // Options::member_guard.allow_two_masters: Sentinel group members without either
  // remedy, to show what a failover does without them.
  bool allow_two_masters = false;
};

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

// A Sentinel group's or a cluster's URL lists its hosts with commas too, so a comma
// starts a new member only where a scheme follows: "redis-sentinel://h:1,h:2/name,redis://h:3"
// is two members.
std::vector<std::string> split_urls(std::string_view text) {
  std::vector<std::string> out;
  for (std::string& piece : split(text, ',')) {
    if (out.empty() || piece.find("://") != std::string::npos) {
      out.push_back(std::move(piece));
    } else {
      out.back() += "," + piece;
    }
  }
  return out;
}

// The runner spells its switches on|off, always with a value, so that every worker
// command line names every setting.
CLI::Option* add_on_off_option(CLI::App& app, const std::string& name, bool& target,
                               const std::string& description) {
  return app
      .add_option_function<std::string>(
          name, [&target](const std::string& value) { target = value == "on"; }, description)
      ->check(CLI::IsMember({"on", "off"}))
      ->default_str(target ? "on" : "off");
}

Config parse(int argc, char** argv) {
  Config c;
  CLI::App app{
      "One client process of a chaos scenario: threads contend for keys through "
      "redlock::Client and log every attempt, hold and fenced write for the checker.",
      "redlock-chaos-worker"};
  app.option_defaults()->always_capture_default();
  // CLI::PositiveNumber would quote the largest double in its message.
  const CLI::Range positive(1, std::numeric_limits<int>::max());
  std::string nodes;
  app.add_option("--nodes", nodes, "Lock nodes, comma-separated")->type_name("URL,...")->required();
  app.add_option("--store", c.store, "The FencedStore's Redis")->type_name("URL")->required();
  app.add_option("--events", c.events, "Write the event records here")
      ->type_name("FILE")
      ->required();
  app.add_option("--id", c.id, "This worker's name in the records");
  app.add_option("--threads", c.threads, "Contending threads")->check(positive);
  app.add_option("--keys", c.keys, "Keys of each primitive")->check(positive);
  add_duration_option(app, "--duration", c.duration, "How long to run");
  add_duration_option(app, "--ttl", c.ttl, "Lock TTL");
  add_duration_option(app, "--wait", c.wait, "How long one acquire may wait");
  add_duration_option(app, "--hold", c.hold, "How long a critical section lasts");
  app.add_option("--stall-every", c.stall_every,
                 "Every Nth hold of a thread stalls past the validity (0: never)");
  add_duration_option(app, "--stall", c.stall, "How long a stall lasts (0: 1.5 x --ttl)");
  add_duration_option(app, "--node-timeout", c.node_timeout, "Options::node_timeout");
  app.add_option("--prefix", c.prefix, "Prefix of every key");
  app.add_option("--seed", c.seed, "Seed of the threads' random choices");
  app.add_option("--foreign-threads", c.foreign_threads,
                 "Threads that lock as another Redlock client would");
  const std::map<std::string, Load> loads{
      {"exclusive", Load::exclusive}, {"rw", Load::rw},   {"semaphore", Load::semaphore},
      {"multi", Load::multi},         {"mix", Load::mix}, {"election", Load::election}};
  app.add_option_function<std::string>(
         "--primitive", [&](const std::string& name) { c.load = loads.at(name); },
         "What the threads take")
      ->check(CLI::IsMember(loads))
      ->default_str("exclusive");
  app.add_option("--permits", c.permits, "K, the permits of a semaphore")->check(positive);
  app.add_option("--unsafe-permit-quorum", c.unsafe_permit_quorum,
                 "TEST ONLY: nodes that grant a permit (0: the safe quorum)");
  app.add_option("--unsafe-election-quorum", c.unsafe_election_quorum,
                 "TEST ONLY: nodes that elect a leader (0: a majority)");
  app.add_option("--unfenced-every", c.unfenced_every,
                 "Every Nth exclusive lock of a thread is taken without fencing (0: never)");
  add_on_off_option(app, "--member-guard", c.member_guard,
                    "Options::member_guard.observed_restarts");
  app.add_option("--replicas-to-ack", c.replicas_to_ack,
                 "Options::member_guard.replicas_to_ack (0: no WAIT)");
  app.add_option("--quorum", c.quorum, "Options::quorum (0: a majority)");
  add_on_off_option(app, "--allow-two-masters", c.allow_two_masters,
                    "Options::member_guard.allow_two_masters");
  parse_or_exit(app, argc, argv, [&] {
    c.nodes = split_urls(nodes);
    if (c.nodes.empty()) throw CLI::ValidationError("--nodes", "names no node");
    const int node_count = static_cast<int>(c.nodes.size());
    for (const auto& [name, quorum] :
         {std::pair{"--unsafe-permit-quorum", c.unsafe_permit_quorum},
          std::pair{"--unsafe-election-quorum", c.unsafe_election_quorum}}) {
      if (quorum < 0 || quorum > node_count) {
        throw CLI::ValidationError(name, "must be between 1 and the number of nodes");
      }
    }
  });
  if (c.stall.count() == 0) c.stall = c.ttl * 3 / 2;
  return c;
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

// What one critical section takes.
struct Pick {
  Primitive primitive = Primitive::exclusive;
  std::vector<std::string> keys;  // one, or a key set's
  bool reentrant = false;
  bool fenced = true;  // exclusive locks only; the others fence as their kind allows
};

class Worker {
 public:
  Worker(const Config& config, redlock::Client& client, LoweredPermitQuorum* lowered,
         redlock::FencedStore& store, EventLog& log)
      : config_(config), client_(client), lowered_(lowered), store_(store), log_(log) {}

  void run(int thread) {
    const std::string name = config_.id + "." + std::to_string(thread);
    std::mt19937 random(config_.seed * 7919u + static_cast<unsigned>(thread));
    const auto deadline = std::chrono::steady_clock::now() + config_.duration;
    int holds = 0;
    int exclusive_sections = 0;
    while (!stop_requested && std::chrono::steady_clock::now() < deadline) {
      Pick pick = choose(random);
      if (pick.primitive == Primitive::exclusive && config_.unfenced_every > 0 &&
          ++exclusive_sections % config_.unfenced_every == 0)
        pick.fenced = false;
      const std::string& key = pick.keys.front();
      auto result = acquire(pick);
      const std::int64_t at = monotonic_ns();
      if (!result) {
        const bool conflict = result.error() == redlock::errc::conflict;
        log_.append(AttemptEvent{key, name,
                                 conflict ? AttemptResult::conflict : AttemptResult::error,
                                 conflict ? "" : code_name(result.code()), at, pick.primitive});
        // Errors come back at once while nodes are down; do not spin on them.
        if (!conflict) sleep_for(milliseconds(20));
        continue;
      }
      log_.append(AttemptEvent{key, name, AttemptResult::acquired, "", at, pick.primitive});
      // The owner of a reentrant lock enters it again for a nested section, which sends
      // nothing and must leave the lock held on the nodes after the nested leave.
      std::optional<redlock::ReentrantLock> reentrant;
      if (pick.reentrant) reentrant.emplace(std::move(*result));
      redlock::Lock& lock = reentrant ? reentrant->lock() : *result;
      const std::optional<std::uint64_t> token = lock.fencing_token();
      const std::int64_t valid_until = to_ns(lock.valid_until());

      // A key set's tokens are one per key: each key's store is written with its own.
      // Its hold record carries none (the checker orders holds by one token per key).
      const auto write_all = [&] {
        if (token) return fenced_write(name, key, *token, lock.value());
        for (const auto& each : pick.keys) {
          if (auto own = lock.fencing_token(each)) fenced_write(name, each, *own, lock.value());
        }
      };
      write_all();
      const bool nested = reentrant && reentrant->reenter();
      const bool stall = config_.stall_every > 0 && ++holds % config_.stall_every == 0;
      sleep_for(stall ? config_.stall : config_.hold);
      if (nested) (void)reentrant->unlock();
      write_all();

      // The holder stops relying on the lock here, or its validity ended earlier.
      const std::int64_t released = monotonic_ns();
      HoldEvent record{key, name, lock.value(), at, std::min(valid_until, released), token};
      record.primitive = pick.primitive;
      if (pick.primitive == Primitive::permit) record.permits = config_.permits;
      if (pick.primitive == Primitive::multi) record.keys = pick.keys;
      log_.append(record);
      (void)(reentrant ? reentrant->unlock() : lock.unlock());
    }
  }

 private:
  // Each primitive has keys of its own (a key serves one kind of lock); key sets and the
  // exclusive lock share theirs, as lock_all() and lock() exclude each other key by key.
  std::string key(std::string_view kind, int index) const {
    return config_.prefix + std::string(kind) + std::to_string(index);
  }

  Pick choose(std::mt19937& random) const {
    std::uniform_int_distribution<int> any_key(0, config_.keys - 1);
    std::bernoulli_distribution coin;
    Primitive primitive = Primitive::exclusive;
    switch (config_.load) {
      case Load::exclusive:
        break;
      case Load::rw:
        primitive = coin(random) ? Primitive::reader : Primitive::writer;
        break;
      case Load::semaphore:
        primitive = Primitive::permit;
        break;
      case Load::multi:
        primitive = Primitive::multi;
        break;
      case Load::election:  // its threads are candidates (run_candidate), never here
        break;
      case Load::mix: {
        constexpr Primitive all[] = {Primitive::exclusive, Primitive::multi, Primitive::reader,
                                     Primitive::writer, Primitive::permit};
        primitive = all[std::uniform_int_distribution<int>(0, 4)(random)];
        break;
      }
    }
    Pick pick{primitive, {}, false, true};
    switch (primitive) {
      case Primitive::election:  // never drawn: candidates campaign in their own loop
      case Primitive::exclusive:
        pick.keys = {key("", any_key(random))};
        pick.reentrant = coin(random);
        break;
      case Primitive::reader:
      case Primitive::writer:
        pick.keys = {key("rw:", any_key(random))};
        break;
      case Primitive::permit:
        // In the mix a fifth of the threads want a permit at a time: on one semaphore
        // that is more than K, so holders wait for permits as they do for the locks.
        pick.keys = {key("sem:", config_.load == Load::mix ? 0 : any_key(random))};
        break;
      case Primitive::multi: {
        // Two keys or more when there are, in any order: sets overlap in opposite orders.
        std::vector<int> order(static_cast<std::size_t>(config_.keys));
        for (int i = 0; i < config_.keys; ++i) order[static_cast<std::size_t>(i)] = i;
        std::shuffle(order.begin(), order.end(), random);
        const int size =
            std::uniform_int_distribution<int>(std::min(2, config_.keys), config_.keys)(random);
        for (int i = 0; i < size; ++i)
          pick.keys.push_back(key("", order[static_cast<std::size_t>(i)]));
        break;
      }
    }
    return pick;
  }

  redlock::Result<redlock::Lock> acquire(const Pick& pick) {
    redlock::LockOptions options;
    options.ttl = config_.ttl;
    options.wait = config_.wait;
    const std::string& key = pick.keys.front();
    switch (pick.primitive) {
      case Primitive::election:  // never drawn: candidates campaign in their own loop
      case Primitive::exclusive:
        options.fencing = pick.fenced;
        return client_.lock(key, options);
      case Primitive::multi:
        options.fencing = true;
        return client_.lock_all(pick.keys, options);
      case Primitive::reader:
        return client_.read_lock(key, options);
      case Primitive::writer:
        options.fencing = true;
        return client_.write_lock(key, options);
      case Primitive::permit: {
        const redlock::SemaphoreOptions permit{.permits = config_.permits, .lock = options};
        return lowered_ ? lowered_->acquire_permit(key, permit)
                        : client_.acquire_permit(key, permit);
      }
    }
    return client_.lock(key, options);
  }

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
  LoweredPermitQuorum* lowered_;  // null unless --unsafe-permit-quorum
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
    options.member_guard.observed_restarts = config.member_guard;
    options.member_guard.longest_ttl = config.ttl;
    options.member_guard.replicas_to_ack = config.replicas_to_ack;
    options.quorum = config.quorum;
    options.member_guard.allow_two_masters = config.allow_two_masters;
    std::shared_ptr<redlock::Client> client;
    std::unique_ptr<LoweredPermitQuorum> lowered;
    if (config.unsafe_permit_quorum > 0) {
      lowered = std::make_unique<LoweredPermitQuorum>(options, config.unsafe_permit_quorum);
    } else {
      client = redlock::Client::create(options);
    }
    redlock::Client& api = lowered ? lowered->client() : *client;
    auto store = redlock::FencedStore::create(config.store);
    Worker worker(config, api, lowered.get(), *store, log);
    const CandidateSettings candidates{
        options,     config.id,   config.prefix,   config.keys, config.ttl,
        config.wait, config.hold, config.duration, config.seed, config.unsafe_election_quorum};
    std::vector<std::thread> threads;
    for (int t = 0; t < config.threads; ++t) {
      if (config.load == Load::election) {
        threads.emplace_back([&candidates, &store, &log, t] {
          run_candidate(candidates, t, *store, log, stop_requested);
        });
      } else {
        threads.emplace_back([&worker, t] { worker.run(t); });
      }
    }
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
    api.close();
  } catch (const std::exception& error) {
    std::cerr << "redlock-chaos-worker: " << error.what() << "\n";
    return 1;
  }
  return 0;
}

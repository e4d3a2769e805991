#include "worker/election_candidates.hpp"

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <utility>
#include <variant>

#include "worker/code_name.hpp"
#include "worker/lowered_election_quorum.hpp"

namespace redlock::chaos {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Often enough that a short run sees several successors wait out a crashed leader's TTL,
// seldom enough that those waits leave most of the run to handovers.
constexpr int lapse_one_in = 6;

// Terms of a few holds never need an extension. One in this many lasts 1.5-3 TTLs, so
// that the watchdog extends it and the faults meet leaders mid-term: a leader cut off
// from a majority must see its stop token before its validity ends.
constexpr int long_one_in = 8;

// How often a leader looks at its stop token: well inside the validity the watchdog
// leaves when it gives up (a failed round and a retry).
constexpr milliseconds lead_tick{2};

std::int64_t to_ns(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

// One term, won through Election or (test only) through the lowered quorum's bare lock.
class Term {
 public:
  Term(Leadership leadership, std::string key)
      : key_(std::move(key)), held_(std::move(leadership)) {}
  Term(Lock lock, std::string key) : key_(std::move(key)), held_(std::move(lock)) {}

  std::uint64_t term() const {
    if (const auto* leadership = std::get_if<Leadership>(&held_)) return leadership->term();
    return std::get<Lock>(held_).fencing_token(key_).value_or(0);
  }
  const Lock& lock() const {
    if (const auto* leadership = std::get_if<Leadership>(&held_)) return leadership->lock();
    return std::get<Lock>(held_);
  }
  /// The stop token was requested: the watchdog could not keep a quorum.
  bool lost() const {
    if (const auto* leadership = std::get_if<Leadership>(&held_)) {
      return leadership->stop_token().stop_requested();
    }
    return std::get<Lock>(held_).lost();
  }
  void resign() {
    if (auto* leadership = std::get_if<Leadership>(&held_)) {
      (void)leadership->resign();
    } else {
      (void)std::get<Lock>(held_).unlock();
    }
  }

 private:
  std::string key_;
  std::variant<Leadership, Lock> held_;
};

class Candidate {
 public:
  Candidate(const CandidateSettings& settings, int thread, FencedStore& store, EventLog& log,
            const std::atomic<bool>& stop)
      : settings_(settings),
        name_(settings.id + "." + std::to_string(thread)),
        key_(settings.prefix + "elect:" + std::to_string(thread % std::max(settings.keys, 1))),
        random_(settings.seed * 7919u + static_cast<unsigned>(thread)),
        store_(store),
        log_(log),
        stop_(stop) {}

  void run() {
    deadline_ = Clock::now() + settings_.duration;
    start_process();
    std::bernoulli_distribution crash(1.0 / lapse_one_in);
    while (!stop_ && Clock::now() < deadline_) {
      auto term = campaign();
      const std::int64_t won_at = monotonic_ns();
      if (!term) {
        const bool conflict = term.error() == errc::conflict;
        log_.append(
            AttemptEvent{key_, name_, conflict ? AttemptResult::conflict : AttemptResult::error,
                         conflict ? "" : code_name(term.code()), won_at, Primitive::election});
        // Errors come back at once while nodes are down; do not spin on them.
        if (!conflict) pause(milliseconds(20));
        continue;
      }
      log_.append(
          AttemptEvent{key_, name_, AttemptResult::acquired, "", won_at, Primitive::election});
      lead(*term, won_at, crash(random_));
    }
    client().close();
    // How the terms ended, for a soak run's record (docs/safety.md): the checker sees the
    // windows, not why they closed.
    std::cerr << name_ + ": " + std::to_string(resigned_ + lost_ + lapsed_) + " terms, " +
                     std::to_string(resigned_) + " resigned, " + std::to_string(lost_) + " lost, " +
                     std::to_string(lapsed_) + " lapsed\n";
  }

 private:
  // A new client, as a candidate process (re)started would have: the one before it may
  // have been closed by a crash.
  void start_process() {
    if (settings_.unsafe_quorum > 0) {
      lowered_ =
          std::make_unique<LoweredElectionQuorum>(settings_.options, settings_.unsafe_quorum);
      return;
    }
    client_ = Client::create(settings_.options);
    election_.emplace(client_, key_, name_, settings_.ttl);
  }

  Client& client() { return lowered_ ? lowered_->client() : *client_; }

  Result<Term> campaign() {
    if (lowered_) {
      auto lock = lowered_->campaign(key_, settings_.ttl, settings_.wait);
      if (!lock) return std::move(lock).error();
      return Term(std::move(*lock), key_);
    }
    auto leadership = election_->campaign({}, settings_.wait);
    if (!leadership) return std::move(leadership).error();
    return Term(std::move(*leadership), key_);
  }

  void lead(Term& term, std::int64_t won_at, bool crash) {
    const std::uint64_t number = term.term();
    const std::string value = term.lock().value();
    fenced_write(number, value);
    const bool long_term = std::bernoulli_distribution(1.0 / long_one_in)(random_);
    std::uniform_int_distribution<long long> length(
        long_term ? settings_.ttl.count() * 3 / 2 : settings_.hold.count(),
        long_term ? settings_.ttl.count() * 3 : settings_.hold.count() * 4);
    const auto until = std::min(Clock::now() + milliseconds(length(random_)), deadline_);
    while (!stop_ && !term.lost() && Clock::now() < until) std::this_thread::sleep_for(lead_tick);
    // A leader that saw its stop token acts no more; one paused past its validity (the
    // whole worker SIGSTOPped) may not have seen it yet, and its late write is the one the
    // store has to refuse.
    const bool lost = term.lost();
    if (!lost) fenced_write(number, value);
    ++(crash ? lapsed_ : lost ? lost_ : resigned_);

    std::int64_t end = 0;
    if (crash) {
      // Closing the client stops the watchdog without a release or a stop request: the key
      // stays on the nodes until its TTL runs out, as after a crash. The validity the
      // client knew last is read once the watchdog can no longer move it.
      const auto before = term.lock().valid_until();
      client().close();
      end = to_ns(std::max(before, term.lock().valid_until()));
    } else {
      end = std::min(to_ns(term.lock().valid_until()), monotonic_ns());
    }
    HoldEvent record{key_, name_, value, won_at, end, number};
    record.primitive = Primitive::election;
    log_.append(record);
    if (crash) {
      term = Term(Lock(), key_);  // destroyed with the client closed: sends nothing
      election_.reset();
      client_.reset();
      lowered_.reset();
      start_process();
    } else {
      term.resign();
    }
  }

  void fenced_write(std::uint64_t term, const std::string& value) {
    const std::int64_t start = monotonic_ns();
    auto written = store_.write(key_, term, "data:" + key_, value);
    const std::int64_t end = monotonic_ns();
    const bool stale = !written && written.error() == errc::stale_token;
    log_.append(WriteEvent{key_, name_, term, static_cast<bool>(written), stale, start, end});
  }

  // Sleeps, but wakes early when the worker is asked to stop.
  void pause(milliseconds duration) {
    const auto until = Clock::now() + duration;
    while (!stop_ && Clock::now() < until) std::this_thread::sleep_for(lead_tick);
  }

  const CandidateSettings& settings_;
  const std::string name_;
  const std::string key_;
  std::mt19937 random_;
  FencedStore& store_;
  EventLog& log_;
  const std::atomic<bool>& stop_;
  std::shared_ptr<Client> client_;
  std::optional<Election> election_;
  std::unique_ptr<LoweredElectionQuorum> lowered_;
  Clock::time_point deadline_;
  int resigned_ = 0;
  int lost_ = 0;
  int lapsed_ = 0;
};

}  // namespace

void run_candidate(const CandidateSettings& settings, int thread, FencedStore& store, EventLog& log,
                   const std::atomic<bool>& stop) {
  Candidate(settings, thread, store, log, stop).run();
}

}  // namespace redlock::chaos

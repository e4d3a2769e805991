#pragma once
// One acquisition of any kind of lock (exclusive, permit, reader, writer, key set), as a
// sans-I/O state machine: it is told what happened (started, an attempt's round was
// decided, the fencing write-back was decided, a release was announced, the retry timer
// fired, the caller asked to stop, the client began closing) and answers what to do next
// (send an attempt, send the write-back, sleep until a time, hand the lock out, give up
// with a cause). It alone decides: which failures are conflicts and which an unreachable
// quorum, the retry schedule (one bounded, jittered schedule for every cause), the wait
// deadline (saturating: milliseconds::max() waits without end), max_attempts, stop,
// fail_fast, and that nothing is handed out once the client closes. The I/O shell
// (client/acquire) carries the actions out for every kind; a kind only supplies data:
// its scripts, its quorum, how a node's reply reads, and the few facts below.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/quorum.hpp"
#include "core/retry.hpp"
#include "core/validity.hpp"

namespace redlock::core {

/// Why an acquisition gave up (or why an attempt failed, for the observer).
enum class AcquireCause {
  none,
  conflict,           ///< other holders refused with a quorum reachable (errc::conflict)
  unreachable,        ///< the nodes not failing could not form a quorum
  validity_expired,   ///< a quorum agreed too late: no validity left
  write_back_failed,  ///< the fencing write-back failed on a quorum (contention there)
  wrong_kind,         ///< the key is another kind of lock (or a user's own value) somewhere
  protocol_error,     ///< a node answered something the protocol never does
  stopped,            ///< LockOptions::stop
  closed,             ///< the client closed
};

/// What the shell must do next.
struct AcquireAction {
  enum class Step {
    none,             ///< nothing (an event that changes nothing, or after the end)
    send_attempt,     ///< a new attempt: a fresh value, the kind's acquire on every node
    send_write_back,  ///< the fencing write-back of the attempt just reached
    sleep,            ///< wait until `until` (a wake may come sooner)
    hand_out,         ///< the lock is acquired, valid until `valid_until`
    give_up,          ///< the acquisition ends with `cause`
  };
  Step step = Step::none;
  /// The value of the attempt that just ended is released on every node that may hold it,
  /// before anything else happens (the next attempt is queued behind the release).
  bool release_attempt = false;
  Clock::time_point until{};
  Clock::time_point valid_until{};
  AcquireCause cause = AcquireCause::none;
  /// give_up after more than one attempt: the message says how many.
  int attempts = 0;
};

/// The facts of one decided attempt round that the machine cannot compute from the vote
/// counts: read by the shell from the round's per-node outcomes and the waiter queue.
struct AttemptFacts {
  Decision decision = Decision::undecided;  ///< reached or impossible
  FailureKind failure = FailureKind::contention;
  /// Some node says the key is another kind of lock, or the reply broke the protocol.
  bool wrong_kind = false;
  bool protocol_error = false;
  /// When the round started: validity counts from here.
  Clock::time_point started{};
  // --- waiting only ---------------------------------------------------------------------
  /// Other holders refused on a quorum of nodes: a real holder, not a split vote.
  bool holder_on_quorum = false;
  /// Then, when the nodes told it: how long until that holder's entry (for a semaphore,
  /// the earliest of its holders') can expire.
  std::optional<std::chrono::milliseconds> holder_expires_in;
  /// The value of that holder ("" if none): a new one is looked at again sooner.
  std::string holder;
  /// That holder's release was already announced: it is leaving.
  bool leaving = false;
  /// A release of the key was announced while this attempt was on the wire.
  bool announced_in_flight = false;
  /// Other waiters of this client came first: they are woken in turn, this one waits.
  bool others_waiting_before = false;
  /// A split vote: no single holder on a quorum; how long until the entries that refused
  /// leave a quorum free (if known) and whether our value orders first among them.
  std::optional<std::chrono::milliseconds> split_clears_in;
  bool orders_first = false;
};

class Acquisition {
 public:
  struct Config {
    std::chrono::milliseconds ttl{30'000};
    /// 0 = one attempt; milliseconds::max() = until acquired, stopped or closed.
    std::chrono::milliseconds wait{0};
    RetryPolicy retry;
    bool fail_fast = false;
    /// A reached attempt is written back (fencing) before it is handed out.
    bool write_back = false;
    std::chrono::milliseconds node_timeout{50};
    DriftPolicy drift;
    /// A waiter sleeps until a single holder's entry can expire (false for key sets,
    /// which listen on one key of several).
    bool sleeps_on_holder = true;
    /// A writer's intent must be refreshed by the next attempt within this span.
    std::optional<std::chrono::milliseconds> refresh_within;
  };

  Acquisition(Config config, Clock::time_point now, RandomSource random);

  /// The first step. `others_waiting`: other waiters of this client wait for the key
  /// already; this one queues behind them (its first attempt after a retry delay unless
  /// a wake comes first) instead of racing them.
  AcquireAction start(Clock::time_point now, bool stop_requested, bool accepting,
                      bool others_waiting = false);
  /// The attempt's round was decided. `accepting`: the client is not closing.
  AcquireAction attempt_decided(const AttemptFacts& facts, Clock::time_point now, bool accepting);
  /// The write-back round was decided (reached or not, and why not).
  AcquireAction write_back_decided(Decision decision, FailureKind failure, Clock::time_point now,
                                   bool accepting);
  /// A release of the key was announced and it is this waiter's turn.
  AcquireAction woken(Clock::time_point now, bool accepting);
  /// The sleep ended.
  AcquireAction timer_fired(Clock::time_point now, bool accepting);
  /// LockOptions::stop was requested.
  AcquireAction stop();
  /// The client began closing.
  AcquireAction close();

  bool done() const noexcept { return state_ == State::done; }
  bool waiting() const noexcept { return waits_; }
  int attempts() const noexcept { return attempts_; }
  Clock::time_point started() const noexcept { return started_; }
  Clock::time_point deadline() const noexcept { return schedule_.deadline(); }
  /// The cause of the last failed attempt (none before one failed).
  AcquireCause last_failure() const noexcept { return last_failure_; }

 private:
  enum class State { idle, attempting, writing_back, sleeping, done };

  AcquireAction send_attempt();
  AcquireAction give_up(AcquireCause cause, bool release_attempt);
  AcquireAction hand_out_or_retry(Clock::time_point now);
  AcquireAction attempt_failed(AcquireCause cause, const AttemptFacts* facts,
                               Clock::time_point now);
  std::optional<Clock::time_point> next_attempt(const AttemptFacts* facts, AcquireCause cause,
                                                Clock::time_point now);
  std::chrono::milliseconds recheck_delay(std::string_view holder);

  Config config_;
  Clock::time_point started_;
  RetrySchedule schedule_;
  RandomSource random_;
  bool waits_;
  State state_ = State::idle;
  int attempts_ = 0;
  Clock::time_point attempt_started_{};
  AcquireCause last_failure_ = AcquireCause::none;
  int unreachable_streak_ = 0;  // consecutive attempts that found no quorum reachable
  int leaving_streak_ = 0;      // consecutive refusals by holders announced as released
  int split_streak_ = 0;        // consecutive split votes
  std::string last_holder_seen_;
  int same_holder_streak_ = 0;  // consecutive rechecks that saw the same holder
};

/// The wait deadline `wait` after `start`, saturated: milliseconds::max() (or any wait
/// past the clock's range) never ends.
Clock::time_point wait_deadline(Clock::time_point start, std::chrono::milliseconds wait);

/// How long the retries after `streak` consecutive attempts that found no quorum
/// reachable wait at most: the retry delay doubled per attempt past the first, capped at
/// a second (or the delay itself when longer). Nodes that fail at once (connection
/// refused) must not turn a waiter into a stream of commands to the nodes still up.
std::chrono::milliseconds unreachable_retry(int streak, const RetryPolicy& policy,
                                            std::uint64_t random);

}  // namespace redlock::core

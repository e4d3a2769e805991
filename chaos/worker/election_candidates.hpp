#pragma once
// Candidates of leader elections: each worker thread is one candidate, with a client of
// its own (as each candidate of a real election is a process of its own), campaigning on
// one of the election keys with redlock::Election. A candidate that wins leads for a
// random short while (a few holds, or in one term of long_one_in a few TTLs, extended by
// the watchdog): a fenced write with its term, then the term, then another fenced write;
// then it resigns, or stops leading as soon as its stop token is requested. One term in
// lapse_one_in (election_candidates.cpp) ends in a simulated crash instead: the
// candidate closes its client, which stops the watchdog without resigning, so the key
// lapses on the nodes at its TTL, and campaigns again with a new client.
//
// Each leadership is logged as a hold of primitive "election" carrying its term (the
// checker's README): from the return of campaign() to the earlier of the validity's end
// as the client knew it and the moment the leader stopped (resigned, or saw its stop
// token). A crashed leader is logged to the end of its validity: it may have been a
// paused one that wakes believing it still leads, so no successor may start before.

#include <atomic>
#include <chrono>
#include <string>

#include <redlock/redlock.hpp>

#include "worker/event_log.hpp"

namespace redlock::chaos {

struct CandidateSettings {
  /// The options of each candidate's own client.
  Options options;
  /// Names the candidates: "<id>.<thread>".
  std::string id;
  /// The election keys are "<prefix>elect:<n>", n < keys; candidate t stands in n = t % keys.
  std::string prefix;
  int keys = 1;
  std::chrono::milliseconds ttl{1000};
  /// How long one campaign() waits before it gives up (errc::conflict while someone leads).
  std::chrono::milliseconds wait{1000};
  /// A short term lasts between hold and 4 x hold, a long one 1.5 to 3 ttl, unless lost or
  /// crashed; none outlasts the duration.
  std::chrono::milliseconds hold{20};
  std::chrono::milliseconds duration{10'000};
  unsigned seed = 1;
  /// TEST ONLY: campaigns granted by this many nodes, below a majority
  /// (lowered_election_quorum.hpp); 0 for Election itself.
  int unsafe_quorum = 0;
};

/// Runs candidate `thread` until `duration` ends or `stop` is set, writing its attempts,
/// leaderships and fenced writes (into `store`, under each election key) to `log`.
void run_candidate(const CandidateSettings& settings, int thread, FencedStore& store, EventLog& log,
                   const std::atomic<bool>& stop);

}  // namespace redlock::chaos

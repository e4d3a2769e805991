#pragma once
// The quorum decision of one round (acquire, extend, release or fence) over N nodes that
// were all asked at once. Replies arrive in any order; the round is decided by the first
// reply that settles it — enough grants, or too few grants still possible — so nobody
// waits for a timeout that cannot change the outcome.

#include <chrono>
#include <cstdint>
#include <vector>

namespace redlock::core {

/// How one node answered, as far as the quorum is concerned.
enum class Vote {
  granted,  ///< the node did what was asked (SET NX, PEXPIRE, DEL, fence)
  refused,  ///< the node answered but the key is another owner's (or gone)
  failed,   ///< no usable answer: timeout, connection or Redis error
  /// The node did what was asked, but it is in its guard period (core/member_guard.hpp):
  /// the grant cannot make up a quorum, so for the decision the node is as unavailable as
  /// a failed one. What it granted is released like any other grant.
  uncounted,
};

enum class Decision {
  undecided,
  reached,     ///< grants >= quorum
  impossible,  ///< grants + nodes still pending < quorum
};

/// Why an impossible round failed: the caller maps `contention` to errc::conflict (or
/// not_held) and `unreachable` to errc::quorum_unreachable.
enum class FailureKind { contention, unreachable };

class QuorumRound {
 public:
  /// `nodes` >= 1, 1 <= `quorum` <= `nodes` (validated by the caller).
  QuorumRound(int nodes, int quorum);
  /// As if newly constructed, keeping the storage for the votes.
  void reset(int nodes, int quorum);

  /// Records node `index`'s vote and returns the decision. The first decision sticks:
  /// votes after it are counted (for the record) but never change it. A second vote from
  /// the same node is ignored.
  Decision record(int index, Vote vote, std::uint64_t token = 0);

  Decision decision() const noexcept { return decision_; }
  /// The votes counted when the decision was made (later votes excluded).
  int grants_at_decision() const noexcept { return grants_at_decision_; }
  /// The round's result is final for its caller: reached, or impossible with its cause
  /// known. A contention is final once the refusals alone rule a quorum out whatever the
  /// nodes still pending answer; an unreachable quorum waits for every node (each has
  /// its own deadline), so that its error lists every node's answer and a node that is
  /// merely slow is not reported as down.
  bool settled() const noexcept;

  int nodes() const noexcept { return static_cast<int>(votes_.size()); }
  int quorum() const noexcept { return quorum_; }
  int grants() const noexcept { return grants_; }
  int refusals() const noexcept { return refusals_; }
  int failures() const noexcept { return failures_; }
  /// Grants of guarded members: not counted, and no longer pending.
  int uncounted() const noexcept { return uncounted_; }
  int pending() const noexcept { return nodes() - grants_ - refusals_ - failures_ - uncounted_; }
  bool answered(int index) const noexcept;

  /// Only meaningful once impossible and settled (or abandoned): `unreachable` iff the
  /// nodes not failing cannot form a quorum (more than N - quorum failures or guarded
  /// grants: a guarded member cannot help a quorum either), otherwise `contention`: a
  /// quorum was reachable and other holders' refusals made the difference. So one node
  /// down out of five never turns a held lock into "unreachable", and a partitioned
  /// majority (three nodes failing) is never called contention, whatever the reachable
  /// minority answered. A round abandoned while a quorum was still possible is a
  /// contention (a node silent for a few milliseconds is slow as often as it is down).
  /// One abandoned after the answers had ruled a quorum out takes the nodes still silent
  /// to fail in the proportion in which the answered nodes that did not grant failed:
  /// beside a holder's refusals and one node down, a new client's members still being
  /// connected are a contention; beside guarded grants that outnumber nothing, a
  /// silent restarted member tips it to unreachable.
  FailureKind failure_kind() const noexcept;

  /// Another holder refused on some node while the round is open: the quorum now hangs on
  /// the nodes still pending.
  bool contended() const noexcept { return decision_ == Decision::undecided && refusals_ > 0; }
  /// The caller stops waiting for the nodes still pending (straggler_allowance ran out):
  /// an undecided round is decided impossible with the votes so far, a contention unless
  /// the failures alone rule a quorum out. Returns the decision.
  Decision abandon_pending();

  /// The largest token among the grants counted at the decision (fencing: the counters
  /// the granted nodes returned; 0 without fencing).
  std::uint64_t max_token() const noexcept { return max_token_at_decision_; }

 private:
  int quorum_;
  std::vector<signed char> votes_;  // -1 = pending, else the Vote
  int grants_ = 0;
  int refusals_ = 0;
  int failures_ = 0;
  int uncounted_ = 0;
  std::uint64_t max_token_ = 0;
  Decision decision_ = Decision::undecided;
  bool abandoned_ = false;            // abandon_pending() was called
  bool abandoned_undecided_ = false;  // abandon_pending() decided it
  int grants_at_decision_ = 0;
  std::uint64_t max_token_at_decision_ = 0;
};

/// How long, from its start, a contended acquire attempt (QuorumRound::contended) waits
/// for the nodes that have not answered, given the slowest answer so far: four times
/// that, at least 2 ms, at most `node_timeout`. A node that is silent (paused, or
/// blackholed by a partition) is met anew by every new client, and an attempt that waits
/// a whole node timeout for it keeps its partial grants on the others, where they refuse
/// every other contender for as long: with a node silent, contenders split the nodes
/// round after round and nobody wins. Giving up on a straggler is always safe (the
/// attempt's value is released everywhere); an attempt no one else contests never gives
/// up early.
std::chrono::microseconds straggler_allowance(std::chrono::microseconds slowest_answer,
                                              std::chrono::milliseconds node_timeout);

}  // namespace redlock::core

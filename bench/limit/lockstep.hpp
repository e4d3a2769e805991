#pragma once
// One phase of B cycles in lockstep: the same B commands go to every node in one write
// each, then replies are read until every node has answered all of them. Reply k of a
// node answers cycle k (a connection answers in order), so each cycle is decided at its
// own moment: when the `needed`-th node granted it.

#include <poll.h>

#include <chrono>
#include <cstddef>
#include <string_view>
#include <vector>

#include "raw_node.hpp"
#include "reply_scanner.hpp"

namespace redlock_limit {

using Clock = std::chrono::steady_clock;

struct PhaseResult {
  /// Per cycle: ms from the write until `needed` nodes had granted it, or a negative
  /// number when fewer did.
  std::vector<double> decided_ms;
  /// ms from the write until the last node's last reply.
  double all_answered_ms = 0;
  std::size_t granted = 0;
  std::size_t errors = 0;
};

class Lockstep {
 public:
  /// `nodes` must outlive the Lockstep; `timeout` bounds each wait for a reply.
  Lockstep(std::vector<RawNode>& nodes, std::chrono::milliseconds timeout);

  /// Sends `commands` (holding `count` commands) to every node and waits for all the
  /// replies; throws std::runtime_error naming a node that did not answer in time.
  const PhaseResult& run(std::string_view commands, std::size_t count, std::size_t needed);

 private:
  std::vector<RawNode>& nodes_;
  int timeout_ms_;
  // Reused from phase to phase, so a phase allocates nothing once the sizes are reached.
  PhaseResult result_;
  std::vector<unsigned> grants_;
  std::vector<std::size_t> answered_;
  std::vector<Verdict> verdicts_;
  std::vector<pollfd> waiting_;
  std::vector<std::size_t> waiting_node_;
};

}  // namespace redlock_limit

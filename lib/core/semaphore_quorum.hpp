#pragma once
// The quorum of a counting semaphore. A node admits at most K live holders of a key.
// K+1 holders, each granted by q of the N nodes, hold (K+1)·q grants between them; if
// (K+1)·q > N·K some node granted more than K of them, which no node does. So the
// smallest safe quorum is q = floor(N·K / (K+1)) + 1 (K = 1 gives the majority), and a
// semaphore stays available while at most N - q = ceil(N / (K+1)) - 1 nodes fail.

#include <optional>
#include <string>

namespace redlock::core {

/// floor(N·K / (K+1)) + 1: the smallest q with (K+1)·q > N·K. `nodes` >= 1, `permits`
/// >= 1. Always <= nodes.
int semaphore_quorum(int nodes, int permits) noexcept;

/// Failed nodes a semaphore of `permits` on `nodes` tolerates at its smallest quorum:
/// nodes - semaphore_quorum(nodes, permits).
int semaphore_fault_tolerance(int nodes, int permits) noexcept;

/// The fewest nodes on which a semaphore of `permits` tolerates `failures` failed nodes:
/// failures·(permits+1) + 1.
long long nodes_for_semaphore(int permits, int failures) noexcept;

/// The quorum a semaphore acquire uses: `configured` when non-zero, else the larger of
/// the safe quorum and the client's own (`client_quorum`, which a user may have raised
/// above the majority on purpose). nullopt plus `problem` set when the permits or the
/// configured quorum are unsafe or impossible; the message says why and how many nodes
/// the permits would need.
std::optional<int> semaphore_quorum_for(int nodes, int permits, int configured, int client_quorum,
                                        std::string& problem);

}  // namespace redlock::core

#pragma once
// Options of the counting semaphore (Client::acquire_permit).

#include <redlock/options.hpp>

namespace redlock {

/// Options of one permit of a counting semaphore of K permits on a key.
///
/// A node admits at most K live holders of the key, each with its own expiry on the
/// node's clock. A permit is granted by q nodes, where q is the smallest quorum such that
/// any K+1 holders must share a node: (K+1)·q > N·K, so q = floor(N·K/(K+1)) + 1. With
/// N = 5: K = 1 needs 3 nodes (2 may fail), K = 2 or 3 need 4 (1 may fail), K >= 4 need
/// all 5 (none may fail). Tolerating f failed nodes with K permits takes f·(K+1)+1 nodes.
/// docs/kinds.md has the proof.
struct SemaphoreOptions {
  /// K: holders admitted at once. Must be >= 1. Every user of the key must pass the same
  /// K: each node enforces the K of the request it is running.
  int permits = 0;
  /// Nodes that must grant a permit. 0 = the smallest safe quorum above, or the client's
  /// Options::quorum when that is larger. A quorum below the safe one, or above N, is
  /// refused with errc::invalid_argument and a message saying what K needs.
  int quorum = 0;
  /// ttl, wait, max_attempts, auto_extend, extend_every and on_lost as for a lock.
  /// `fencing` must be false: permits carry no fencing token (K holders at once share no
  /// order a storage could enforce).
  LockOptions lock;
};

}  // namespace redlock

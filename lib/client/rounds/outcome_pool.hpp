#pragma once
// Per-node outcome lists handed back by the locks that kept them. An acquire's round
// moves its outcomes into the Lock (Lock::nodes()), so the next round would build the
// list again: a vector and a node name per node, six allocations per cycle on five
// nodes. A lock gives its list back when it goes, on whatever thread drops it, and a new
// round takes one from here.

#include <vector>

#include <redlock/error.hpp>

namespace redlock::detail {

/// A list with capacity for the outcomes of a round, or an empty one when none is spare.
std::vector<NodeOutcome> take_spare_outcomes();

/// Keeps `outcomes` (its strings' storage included) for a later round; drops it when
/// enough are kept already.
void give_back_outcomes(std::vector<NodeOutcome>&& outcomes) noexcept;

}  // namespace redlock::detail

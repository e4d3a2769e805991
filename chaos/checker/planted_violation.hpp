#pragma once
// A violation planted into a run's own records, to show that the checker would have seen
// one there: "0 violations" over a million acquisitions means something only if the same
// checker, over the same records, reports the one hold added to break each rule.

#include <map>
#include <vector>

#include "checker/events.hpp"
#include "checker/primitive.hpp"

namespace redlock::chaos {

/// The forged holds that make `real` a violation of its own primitive's rule: they start
/// one nanosecond before it on its key (its keys, for a key set) and end with it, so the
/// checker, which judges each hold against those live when it starts, charges the overlap
/// to `real`'s primitive. One forged hold of the same primitive for an exclusive lock, a
/// key set, a writer and a leadership (without a token or term, so that no regression hides the
/// overlap); a writer against a reader, whom readers would share with; K more permits
/// against a permit of K. Empty when `real` is too short to overlap (under 2 ns).
std::vector<HoldEvent> planted_against(const HoldEvent& real);

/// Keeps, per primitive, one hold of a run to plant against: the first long enough.
class PlantSites {
 public:
  void offer(const HoldEvent& hold);
  const std::map<Primitive, HoldEvent>& sites() const { return sites_; }

 private:
  std::map<Primitive, HoldEvent> sites_;
};

}  // namespace redlock::chaos

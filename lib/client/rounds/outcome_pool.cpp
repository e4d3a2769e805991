#include "client/rounds/outcome_pool.hpp"

#include "client/util/spare_pool.hpp"

namespace redlock::detail {
namespace {

// One list per lock held at once, about 1 KB each on five nodes: the bound follows the
// rounds' own (client/rounds/round.cpp).
constexpr std::size_t max_spare_lists = 1024;

SparePool<std::vector<NodeOutcome>>& spares() {
  // Never destroyed: a lock dropped during static destruction may still give back.
  static auto* const instance = new SparePool<std::vector<NodeOutcome>>(max_spare_lists);
  return *instance;
}

}  // namespace

std::vector<NodeOutcome> take_spare_outcomes() {
  return spares().take();
}

void give_back_outcomes(std::vector<NodeOutcome>&& outcomes) noexcept {
  if (outcomes.capacity() == 0) return;
  spares().give_back(std::move(outcomes));
}

}  // namespace redlock::detail

#include "client/rounds/outcome_pool.hpp"

#include <mutex>

namespace redlock::detail {
namespace {

// One list per lock held at once, about 1 KB each on five nodes: the bound follows the
// rounds' own (client/rounds/round.cpp).
constexpr std::size_t max_spare_lists = 1024;

struct Spares {
  std::mutex mutex;
  std::vector<std::vector<NodeOutcome>> lists;  // guarded by mutex
};

Spares& spares() {
  // Never destroyed: a lock dropped during static destruction may still give back.
  static auto* const instance = new Spares;
  return *instance;
}

}  // namespace

std::vector<NodeOutcome> take_spare_outcomes() {
  auto& pool = spares();
  std::lock_guard lock(pool.mutex);
  if (pool.lists.empty()) return {};
  auto list = std::move(pool.lists.back());
  pool.lists.pop_back();
  return list;
}

void give_back_outcomes(std::vector<NodeOutcome>&& outcomes) noexcept {
  if (outcomes.capacity() == 0) return;
  auto& pool = spares();
  std::lock_guard lock(pool.mutex);
  if (pool.lists.size() >= max_spare_lists) return;
  try {
    pool.lists.push_back(std::move(outcomes));
  } catch (...) {
    // Out of memory while growing the pool: the list is simply freed.
  }
}

}  // namespace redlock::detail

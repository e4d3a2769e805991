// The outcome lists that locks give back (client/rounds/outcome_pool.hpp): a later round gets
// one with its storage, the node names' included, and the pool stays bounded.

#include "client/rounds/outcome_pool.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "client/util/spare_pool.hpp"

namespace redlock::detail {
namespace {

void drain_pool() {
  while (take_spare_outcomes().capacity() > 0) {
  }
}

TEST(OutcomePool, AListGivenBackIsTakenWithItsStorage) {
  drain_pool();
  std::vector<NodeOutcome> outcomes(5);
  for (auto& outcome : outcomes) outcome.node = "redis://127.0.0.1:7101/a-name-past-sso";
  const auto* storage = outcomes.data();
  const auto* name_storage = outcomes[0].node.data();
  give_back_outcomes(std::move(outcomes));

  auto taken = take_spare_outcomes();
  EXPECT_EQ(taken.data(), storage);
  ASSERT_EQ(taken.size(), 5u);
  EXPECT_EQ(taken[0].node.data(), name_storage) << "the names' storage is reused too";
  EXPECT_EQ(take_spare_outcomes().capacity(), 0u) << "each list is handed out once";
}

TEST(OutcomePool, AnEmptyListIsNotKept) {
  drain_pool();
  give_back_outcomes(std::vector<NodeOutcome>{});
  EXPECT_EQ(take_spare_outcomes().capacity(), 0u);
}

TEST(OutcomePool, KeepsABoundedNumber) {
  drain_pool();
  for (int i = 0; i < 5000; ++i) give_back_outcomes(std::vector<NodeOutcome>(1));
  int kept = 0;
  while (take_spare_outcomes().capacity() > 0) ++kept;
  EXPECT_GT(kept, 0);
  // The shared pool's bound, and this thread's front (client/util/spare_pool.hpp).
  EXPECT_LE(kept, 1024 + static_cast<int>(SparePool<int>::front_size));
}

}  // namespace
}  // namespace redlock::detail

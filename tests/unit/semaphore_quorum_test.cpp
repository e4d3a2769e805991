// The counting semaphore's quorum: q = floor(N·K/(K+1)) + 1 is the smallest q for which
// K+1 holders granted by q nodes each cannot avoid a node that granted K+1 of them, for
// every N and K tried; one less and an explicit placement of K+1 holders exists.

#include "core/semaphore_quorum.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

namespace redlock::core {
namespace {

// Whether K+1 holders, each granted by exactly q of N nodes, can be placed so that no
// node grants more than K of them: exhaustive over every choice of node sets.
bool placement_exists_exhaustively(int nodes, int permits, int quorum) {
  std::vector<unsigned> sets;
  for (unsigned mask = 0; mask < (1u << nodes); ++mask) {
    if (__builtin_popcount(mask) == quorum) sets.push_back(mask);
  }
  std::vector<int> load(static_cast<std::size_t>(nodes), 0);
  std::function<bool(int)> place = [&](int holder) {
    if (holder == permits + 1) return true;
    for (unsigned set : sets) {
      bool fits = true;
      for (int n = 0; n < nodes; ++n) {
        if ((set >> n & 1u) && load[static_cast<std::size_t>(n)] == permits) fits = false;
      }
      if (!fits) continue;
      for (int n = 0; n < nodes; ++n) load[static_cast<std::size_t>(n)] += (set >> n) & 1u;
      if (place(holder + 1)) return true;
      for (int n = 0; n < nodes; ++n) load[static_cast<std::size_t>(n)] -= (set >> n) & 1u;
    }
    return false;
  };
  return place(0);
}

// The round-robin placement: holder h takes nodes h·q, h·q+1, ... (mod N). Its largest
// node load, which stays <= K exactly when (K+1)·q <= N·K.
int round_robin_max_load(int nodes, int permits, int quorum) {
  std::vector<int> load(static_cast<std::size_t>(nodes), 0);
  for (long long slot = 0; slot < static_cast<long long>(permits + 1) * quorum; ++slot) {
    ++load[static_cast<std::size_t>(slot % nodes)];
  }
  int most = 0;
  for (int l : load) most = std::max(most, l);
  return most;
}

TEST(SemaphoreQuorum, IsTheSmallestQuorumThatForcesKPlusOneHoldersToMeet) {
  for (int n = 1; n <= 7; ++n) {
    for (int k = 1; k <= 4; ++k) {
      const int q = semaphore_quorum(n, k);
      SCOPED_TRACE("N=" + std::to_string(n) + " K=" + std::to_string(k) +
                   " q=" + std::to_string(q));
      ASSERT_GE(q, 1);
      ASSERT_LE(q, n);
      EXPECT_FALSE(placement_exists_exhaustively(n, k, q)) << "K+1 holders fit at q";
      if (q > 1) {
        EXPECT_TRUE(placement_exists_exhaustively(n, k, q - 1)) << "q is not the smallest";
      }
    }
  }
}

TEST(SemaphoreQuorum, MatchesTheInequalityForLargeClusters) {
  for (int n = 1; n <= 64; ++n) {
    for (int k = 1; k <= 70; ++k) {
      const int q = semaphore_quorum(n, k);
      ASSERT_GT(static_cast<long long>(k + 1) * q, static_cast<long long>(n) * k);
      ASSERT_LE(static_cast<long long>(k + 1) * (q - 1), static_cast<long long>(n) * k);
      ASSERT_LE(q, n);
      // One less and the round-robin placement keeps every node at K or fewer.
      ASSERT_LE(round_robin_max_load(n, k, q - 1), k) << "N=" << n << " K=" << k;
      ASSERT_GT(round_robin_max_load(n, k, q), k) << "N=" << n << " K=" << k;
    }
  }
}

TEST(SemaphoreQuorum, KOfOneIsTheMajorityAndLargeKNeedsEveryNode) {
  for (int n = 1; n <= 64; ++n) {
    EXPECT_EQ(semaphore_quorum(n, 1), n / 2 + 1);
    EXPECT_EQ(semaphore_quorum(n, n), n);
    EXPECT_EQ(semaphore_quorum(n, 1'000'000), n);
  }
  EXPECT_EQ(semaphore_quorum(1, 1'000'000'000), 1);  // no overflow
  EXPECT_EQ(semaphore_quorum(1'000, 2'000'000'000), 1'000);
}

TEST(SemaphoreQuorum, FaultToleranceOfFiveNodes) {
  // The figures docs/kinds.md gives: K = 1 tolerates 2, K = 2-3 tolerate 1, K >= 4 none.
  EXPECT_EQ(semaphore_fault_tolerance(5, 1), 2);
  EXPECT_EQ(semaphore_fault_tolerance(5, 2), 1);
  EXPECT_EQ(semaphore_fault_tolerance(5, 3), 1);
  EXPECT_EQ(semaphore_fault_tolerance(5, 4), 0);
  EXPECT_EQ(semaphore_fault_tolerance(5, 10), 0);
}

TEST(SemaphoreQuorum, NodesForAToleranceAreTheFewestThatGiveIt) {
  for (int k = 1; k <= 10; ++k) {
    for (int f = 0; f <= 4; ++f) {
      const auto needed = nodes_for_semaphore(k, f);
      EXPECT_GE(semaphore_fault_tolerance(static_cast<int>(needed), k), f);
      if (needed > 1) {
        EXPECT_LT(semaphore_fault_tolerance(static_cast<int>(needed) - 1, k), f);
      }
    }
  }
  EXPECT_EQ(nodes_for_semaphore(3, 1), 5);
  EXPECT_EQ(nodes_for_semaphore(4, 1), 6);
}

TEST(SemaphoreQuorumFor, DefaultsToTheSafeQuorumOrTheClientsLargerOne) {
  std::string problem;
  EXPECT_EQ(semaphore_quorum_for(5, 2, 0, 3, problem), 4);
  EXPECT_EQ(semaphore_quorum_for(5, 1, 0, 3, problem), 3);
  EXPECT_EQ(semaphore_quorum_for(5, 1, 0, 5, problem), 5);
  EXPECT_EQ(semaphore_quorum_for(5, 2, 5, 3, problem), 5);
  EXPECT_TRUE(problem.empty());
}

TEST(SemaphoreQuorumFor, RefusesZeroPermits) {
  std::string problem;
  EXPECT_EQ(semaphore_quorum_for(5, 0, 0, 3, problem), std::nullopt);
  EXPECT_EQ(problem, "permits: must be >= 1, got 0");
  EXPECT_EQ(semaphore_quorum_for(5, -3, 0, 3, problem), std::nullopt);
}

TEST(SemaphoreQuorumFor, RefusesAnUnsafeQuorumSayingWhatKNeeds) {
  std::string problem;
  EXPECT_EQ(semaphore_quorum_for(5, 3, 3, 3, problem), std::nullopt);
  EXPECT_NE(problem.find("quorum: 3 is unsafe for 3 permits on 5 nodes"), std::string::npos)
      << problem;
  EXPECT_NE(problem.find("q >= 4"), std::string::npos) << problem;
  EXPECT_NE(problem.find("tolerating 1 failed nodes"), std::string::npos) << problem;
  EXPECT_NE(problem.find("needs at least 5 nodes"), std::string::npos) << problem;
  problem.clear();
  EXPECT_EQ(semaphore_quorum_for(5, 3, 6, 3, problem), std::nullopt);
  EXPECT_EQ(problem, "quorum: 6 is more than the 5 nodes");
}

}  // namespace
}  // namespace redlock::core

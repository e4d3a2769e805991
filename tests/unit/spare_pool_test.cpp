// The process-wide pool of spare objects (client/util/spare_pool.hpp): a thread's front
// gives back what it took, newest first; past the front, the shared pool keeps up to its
// bound and frees the rest; a second pool of the same type is served by its own; an
// object given back on one thread is taken on another; and what a thread's front holds
// when the thread ends is freed, not leaked.

#include "client/util/spare_pool.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

namespace redlock::detail {
namespace {

// Counts the objects alive, so that a leak or a double free shows.
struct Counted {
  explicit Counted(int id) : id(id) { ++live; }
  ~Counted() { --live; }
  Counted(const Counted&) = delete;
  Counted& operator=(const Counted&) = delete;
  int id;
  static inline int live = 0;
};
using Spare = std::unique_ptr<Counted>;
constexpr std::size_t front = SparePool<Spare>::front_size;

std::vector<int> take_all(SparePool<Spare>& pool) {
  std::vector<int> ids;
  while (Spare spare = pool.take()) ids.push_back(spare->id);
  return ids;
}

// Each test runs on a fresh thread, whose front is empty and serves no pool yet.
template <typename Body>
void on_a_new_thread(Body body) {
  std::thread thread(body);
  thread.join();
}

TEST(SparePool, KeepsUpToFrontAndBoundAndFreesTheRest) {
  on_a_new_thread([] {
    const int before = Counted::live;
    {
      SparePool<Spare> pool(/*bound=*/3);
      for (int id = 0; id < static_cast<int>(front) + 5; ++id) {
        pool.give_back(std::make_unique<Counted>(id));
      }
      EXPECT_EQ(Counted::live - before, static_cast<int>(front) + 3) << "front + bound kept";
      std::vector<int> expected;
      for (int id = static_cast<int>(front) - 1; id >= 0; --id) expected.push_back(id);
      for (int id = static_cast<int>(front) + 2; id >= static_cast<int>(front); --id) {
        expected.push_back(id);
      }
      EXPECT_EQ(take_all(pool), expected) << "the front newest first, then the shared pool";
      EXPECT_EQ(Counted::live, before);
    }
  });
}

TEST(SparePool, ASecondPoolOfTheSameTypeKeepsItsOwn) {
  on_a_new_thread([] {
    SparePool<Spare> first(4);
    SparePool<Spare> second(4);
    first.give_back(std::make_unique<Counted>(1));
    second.give_back(std::make_unique<Counted>(2));
    EXPECT_EQ(take_all(second), std::vector<int>{2});
    EXPECT_EQ(take_all(first), std::vector<int>{1});
  });
}

TEST(SparePool, WhatOneThreadGivesBackAnotherTakes) {
  SparePool<Spare> pool(64);
  on_a_new_thread([&] {
    for (int id = 0; id < static_cast<int>(front) + 2; ++id) {
      pool.give_back(std::make_unique<Counted>(id));
    }
  });
  // The giver's front went with its thread; what overflowed it is in the shared pool.
  on_a_new_thread([&] {
    EXPECT_EQ(take_all(pool),
              (std::vector<int>{static_cast<int>(front) + 1, static_cast<int>(front)}));
  });
}

TEST(SparePool, AnEndingThreadFreesWhatItsFrontHeld) {
  const int before = Counted::live;
  SparePool<Spare> pool(64);
  on_a_new_thread([&] {
    for (int id = 0; id < 3; ++id) pool.give_back(std::make_unique<Counted>(id));
    EXPECT_EQ(Counted::live - before, 3);
  });
  EXPECT_EQ(Counted::live, before);
}

}  // namespace
}  // namespace redlock::detail

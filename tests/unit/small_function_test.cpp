// The callback type of rounds, nodes and connections (core/small_function.hpp): small
// closures in place, large ones on the heap, trivially copyable ones moved as bytes, each
// destroyed exactly once whatever moves it went through.

#include "core/small_function.hpp"

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <string>

namespace redlock::detail {
namespace {

using Function = core::SmallFunction<int(int), 48>;

// Counts live copies of a capture, so a leak or a double destruction shows.
struct Tracked {
  explicit Tracked(int* live) : live(live) { ++*live; }
  Tracked(const Tracked& other) : live(other.live) { ++*live; }
  Tracked(Tracked&& other) noexcept : live(other.live) { ++*live; }
  ~Tracked() { --*live; }
  int* live;
};

// Closures of up to 48 bytes in place, larger ones on the heap: both called, both
// destroyed once.
TEST(SmallFunction, CallsClosuresKeptInPlaceOrOnTheHeap) {
  int live = 0;
  std::array<char, 200> padding{};
  padding[199] = 5;
  {
    Function add_three = [tracked = Tracked(&live), three = 3](int x) { return x + three; };
    Function add_padding = [tracked = Tracked(&live), padding](int x) { return x + padding[199]; };
    EXPECT_EQ(live, 2);
    EXPECT_EQ(add_three(4), 7);
    EXPECT_EQ(add_padding(1), 6);
  }
  EXPECT_EQ(live, 0);
}

TEST(SmallFunction, MovesLeaveTheSourceEmptyAndDestroyOnce) {
  int live = 0;
  std::array<char, 200> padding{};
  for (const bool large : {false, true}) {
    Function first;
    if (large) {
      first = [tracked = Tracked(&live), padding](int x) { return x * 2 + padding[0]; };
    } else {
      first = [tracked = Tracked(&live)](int x) { return x * 2; };
    }
    Function second = std::move(first);
    EXPECT_FALSE(first);  // NOLINT(bugprone-use-after-move): the moved-from state is specified
    ASSERT_TRUE(second);
    EXPECT_EQ(second(21), 42);
    Function third;
    third = std::move(second);
    EXPECT_FALSE(second);  // NOLINT(bugprone-use-after-move)
    EXPECT_EQ(third(1), 2);
    EXPECT_EQ(live, 1);
    third = nullptr;
    EXPECT_FALSE(third);
    EXPECT_EQ(live, 0);
  }
}

// A reply callback's capture (a pointer and an index) is moved as bytes through every hop;
// one that owns something is moved by its own constructor, and one too large for its
// place by its pointer.
TEST(SmallFunction, TriviallyCopyableClosuresMoveAsBytesAndStillWork) {
  int calls = 0;
  int* counter = &calls;
  std::size_t index = 7;  // not const: a constant would not be captured
  auto plain = [counter, index](int x) {
    ++*counter;
    return x + static_cast<int>(index);
  };
  static_assert(Function::moves_as_bytes<decltype(plain)>);
  static_assert(
      !Function::moves_as_bytes<decltype([tracked = Tracked(nullptr)](int x) { return x; })>);
  std::array<char, 200> padding{};
  static_assert(!Function::moves_as_bytes<decltype([padding](int x) { return x + padding[0]; })>);
  Function first = plain;
  Function second = std::move(first);
  Function third;
  third = std::move(second);
  EXPECT_FALSE(first);   // NOLINT(bugprone-use-after-move)
  EXPECT_FALSE(second);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(third(1), 8);
  EXPECT_EQ(calls, 1);
  third = nullptr;
  EXPECT_FALSE(third);
}

TEST(SmallFunction, AssigningOverAHeldClosureDestroysIt) {
  int live = 0;
  Function f = [tracked = Tracked(&live)](int x) { return x; };
  f = [tracked = Tracked(&live)](int x) { return -x; };
  EXPECT_EQ(live, 1);
  EXPECT_EQ(f(3), -3);
}

TEST(SmallFunction, AClosureMayMoveItselfOutBeforeItRuns) {
  // The round takes its callback out of its state before calling it: the callback may
  // start the next round in the same state.
  auto text = std::make_shared<std::string>("kept");
  core::SmallFunction<std::string(), 48> f = [text] { return *text; };
  auto taken = std::move(f);
  f = nullptr;
  EXPECT_EQ(taken(), "kept");
  EXPECT_EQ(text.use_count(), 2);
}

}  // namespace
}  // namespace redlock::detail

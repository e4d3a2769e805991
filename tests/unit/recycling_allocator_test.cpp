// The allocator of the objects each lock cycle makes once (client/util/
// recycling_allocator.hpp): a block freed is handed to the next allocation of its type on
// that thread, up to a bound, never to two objects at once, and kept only by a thread that
// makes them.

#include "client/util/recycling_allocator.hpp"

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <set>
#include <thread>
#include <vector>

namespace redlock::detail {
namespace {

struct Big {
  std::array<char, 2048> bytes{};
  int id = 0;
};

std::shared_ptr<Big> make(int id) {
  auto made = std::allocate_shared<Big>(RecyclingAllocator<Big>());
  made->id = id;
  return made;
}

TEST(RecyclingAllocator, AFreedBlockIsTheNextAllocationsOnThatThread) {
  if (!recycles_blocks) GTEST_SKIP() << "blocks are not recycled under the sanitizers";
  auto first = make(1);
  const void* block = first.get();
  first.reset();
  auto second = make(2);
  EXPECT_EQ(second.get(), block);
  EXPECT_EQ(second->id, 2);
}

TEST(RecyclingAllocator, ObjectsAliveAtOnceHaveDistinctBlocks) {
  std::vector<std::shared_ptr<Big>> alive;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 300; ++i) alive.push_back(make(i));
    std::set<const void*> blocks;
    for (const auto& each : alive) blocks.insert(each.get());
    EXPECT_EQ(blocks.size(), alive.size());
    for (int i = 0; i < 300; ++i) EXPECT_EQ(alive[static_cast<std::size_t>(i)]->id, i);
    alive.clear();  // more than the bound kept: the rest are freed
  }
}

// A caller's thread that destroys the Locks the loop thread made would keep blocks that
// nobody takes: only a thread that makes blocks keeps what it frees.
TEST(RecyclingAllocator, AThreadThatMakesNoneKeepsNone) {
  if (!recycles_blocks) GTEST_SKIP() << "blocks are not recycled under the sanitizers";
  RecyclingAllocator<Big> allocator;
  Big* made_here = allocator.allocate(1);
  std::size_t kept_there = 99;
  std::thread([&] {
    allocator.deallocate(made_here, 1);
    kept_there = RecyclingAllocator<Big>::kept_on_this_thread();
  }).join();
  EXPECT_EQ(kept_there, 0u);
  std::thread([&] {
    Big* own = allocator.allocate(1);
    allocator.deallocate(own, 1);
    kept_there = RecyclingAllocator<Big>::kept_on_this_thread();
  }).join();
  EXPECT_EQ(kept_there, 1u);
}

}  // namespace
}  // namespace redlock::detail

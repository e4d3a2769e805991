// The strings locks give back (client/util/spare_texts.hpp): a later lock's key or value
// is written into a kept block, short strings are never kept, and the pool stays bounded.

#include "client/util/spare_texts.hpp"

#include <gtest/gtest.h>

#include <string>

#include "client/util/spare_pool.hpp"

namespace redlock::detail {
namespace {

constexpr std::size_t lock_value_size = 32;

std::string past_sso(char fill) {
  return std::string(40, fill);
}

TEST(SpareTexts, ATextGivenBackIsTakenWithItsStorage) {
  std::string key = past_sso('k');
  const char* storage = key.data();
  give_back_text(std::move(key));
  // Taken last-in first-out: the block just given back is the next one handed out.
  const std::string taken = spare_text("a-key-of-some-length-past-sso");
  EXPECT_EQ(taken.data(), storage);
  EXPECT_EQ(taken, "a-key-of-some-length-past-sso");
}

TEST(SpareTexts, ABufferIsWrittenOverInAKeptBlock) {
  std::string value = past_sso('v');
  const char* storage = value.data();
  give_back_text(std::move(value));
  const std::string taken = spare_buffer(lock_value_size);
  EXPECT_EQ(taken.data(), storage);
  EXPECT_EQ(taken.size(), lock_value_size);
}

TEST(SpareTexts, AShortTextNeitherTakesNorKeepsABlock) {
  std::string kept = past_sso('x');
  const char* storage = kept.data();
  give_back_text(std::move(kept));
  const std::string shortest = spare_text("k");
  EXPECT_NE(shortest.data(), storage) << "a short text took a kept block";
  give_back_text(std::string("short"));
  EXPECT_EQ(spare_text(past_sso('y')).data(), storage) << "the kept block is still there";
}

TEST(SpareTexts, ALongTextsBlockIsFreedNotKept) {
  give_back_text(std::string(4096, 'l'));
  // Kept, it would be the next block handed out, with all its capacity.
  EXPECT_LT(spare_buffer(40).capacity(), 4096u) << "a block past the kept size was kept";
}

TEST(SpareTexts, KeepsABoundedNumber) {
  for (int i = 0; i < 5000; ++i) give_back_text(past_sso('z'));
  int kept = 0;
  // A kept block has a capacity of at least 40; one made for a 20-character text, 20.
  while (spare_text(std::string(20, 'a')).capacity() >= 40) ++kept;
  EXPECT_GT(kept, 0);
  // The shared pool's bound, and this thread's front (client/util/spare_pool.hpp).
  EXPECT_LE(kept, 2048 + static_cast<int>(SparePool<int>::front_size));
}

}  // namespace
}  // namespace redlock::detail

// Redis Cluster's key slots (net/cluster_slot.hpp) against the cluster specification's
// vectors, and the names the library keeps beside a key on a cluster member.

#include "net/cluster_slot.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace redlock::net {
namespace {

TEST(ClusterSlotTest, Crc16IsXmodemAsTheSpecificationGivesIt) {
  EXPECT_EQ(crc16("123456789"), 0x31C3);
  EXPECT_EQ(crc16(""), 0);
  // A byte above 0x7f must index the table as unsigned.
  EXPECT_EQ(crc16("\xff"), 0x1EF0);
}

TEST(ClusterSlotTest, Crc16OfEveryLengthMatchesTheBitwiseDefinition) {
  // Bytes are taken two at a time, and an odd one last: each length, both parities, and
  // bytes above 0x7f, against the polynomial applied bit by bit.
  const auto bitwise = [](std::string_view bytes) {
    std::uint16_t crc = 0;
    for (const char c : bytes) {
      crc = static_cast<std::uint16_t>(crc ^ (static_cast<std::uint8_t>(c) << 8));
      for (int bit = 0; bit < 8; ++bit) {
        crc = static_cast<std::uint16_t>((crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1);
      }
    }
    return crc;
  };
  std::string bytes;
  for (int length = 0; length <= 40; ++length) {
    EXPECT_EQ(crc16(bytes), bitwise(bytes)) << "length " << length;
    bytes.push_back(static_cast<char>(length * 37 + 200));
  }
}

TEST(ClusterSlotTest, SlotsMatchWhatRedisAnswersToClusterKeyslot) {
  // Values from CLUSTER KEYSLOT of redis-server 7.0.
  EXPECT_EQ(key_slot("foo"), 12182);
  EXPECT_EQ(key_slot("bar"), 5061);
  EXPECT_EQ(key_slot("123456789"), 0x31C3 % 16384);
  EXPECT_EQ(key_slot("ab"), 13567);
  EXPECT_EQ(key_slot("user1000"), 3443);
  EXPECT_EQ(key_slot("lock:orders:42"), 316);
  EXPECT_EQ(key_slot("\xff\xfe\x80\x01"), 14409);
}

TEST(ClusterSlotTest, HashTagsFollowTheSpecification) {
  EXPECT_EQ(hashed_part("{user1000}.following"), "user1000");
  EXPECT_EQ(key_slot("{user1000}.following"), key_slot("{user1000}.followers"));
  EXPECT_EQ(key_slot("{user1000}.following"), key_slot("user1000"));
  // An empty tag is no tag: the whole key is hashed.
  EXPECT_EQ(hashed_part("foo{}{bar}"), "foo{}{bar}");
  // The tag ends at the first '}' after the first '{'.
  EXPECT_EQ(hashed_part("foo{{bar}}zap"), "{bar");
  EXPECT_EQ(hashed_part("foo{bar}{zap}"), "bar");
  // No closing brace: the whole key.
  EXPECT_EQ(hashed_part("foo{bar"), "foo{bar");
  EXPECT_EQ(hashed_part("foo}bar{"), "foo}bar{");
  EXPECT_EQ(hashed_part("a}{b}"), "b");
}

TEST(ClusterSlotTest, CompanionOfAnUntaggedKeyTagsTheWholeKey) {
  EXPECT_EQ(slot_companion("orders:42", ":fence"), "{orders:42}:fence");
  EXPECT_EQ(key_slot(*slot_companion("orders:42", ":fence")), key_slot("orders:42"));
  // A '{' without a tag after it is bytes like any other inside the new tag.
  EXPECT_EQ(slot_companion("a{b", ":fence"), "{a{b}:fence");
  EXPECT_EQ(key_slot(*slot_companion("a{b", ":fence")), key_slot("a{b"));
}

TEST(ClusterSlotTest, CompanionOfATaggedKeyKeepsItsTagFirst) {
  EXPECT_EQ(slot_companion("{user1000}.following", ":fence"), "{user1000}.following:fence");
  EXPECT_EQ(slot_companion("foo{{bar}}zap", ":fence"), "foo{{bar}}zap:fence");
  for (const std::string key : {"{u}x", "foo{{bar}}zap", "a}{b}", "x{y}z}"}) {
    const auto companion = slot_companion(key, ":fence");
    ASSERT_TRUE(companion.has_value()) << key;
    EXPECT_EQ(key_slot(*companion), key_slot(key)) << key;
  }
}

TEST(ClusterSlotTest, KeysWhoseBracesForbidATagHaveNoCompanion) {
  // Their own bytes cannot be a tag (a '}' would end it early), and no other tag hashes
  // to their slot by construction.
  EXPECT_FALSE(slot_companion("a}b", ":fence"));
  EXPECT_FALSE(slot_companion("x{}", ":fence"));
  EXPECT_FALSE(slot_companion("foo{}{bar}", ":fence"));
  EXPECT_FALSE(slot_companion("", ":fence"));
}

TEST(ClusterSlotTest, WhetherAKeyHasACompanionIsToldWithoutNamingIt) {
  for (const std::string_view key : {"orders:42", "a{b", "{user1000}.following", "foo{{bar}}zap",
                                     "{a}b}", "a}b", "x{}", "foo{}{bar}", "}", ""}) {
    EXPECT_EQ(has_slot_companion(key), slot_companion(key, ":fence").has_value()) << key;
  }
  EXPECT_TRUE(has_slot_companion("{a}b}"));
  EXPECT_FALSE(has_slot_companion("a}b"));
}

TEST(ClusterSlotTest, ACompanionWrittenInPlaceReplacesWhatTheStringHeld) {
  std::string name = "a longer name held before, beyond the small-string size";
  ASSERT_TRUE(assign_slot_companion(name, "orders:42", ":released"));
  EXPECT_EQ(name, "{orders:42}:released");
  ASSERT_TRUE(assign_slot_companion(name, "{user1000}.following", ":released"));
  EXPECT_EQ(name, "{user1000}.following:released");
  EXPECT_FALSE(assign_slot_companion(name, "a}b", ":released"));
  EXPECT_EQ(name, "{user1000}.following:released");
}

}  // namespace
}  // namespace redlock::net

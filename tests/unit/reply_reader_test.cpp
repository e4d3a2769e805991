// The bounded reply reader: hiredis' objects for sane replies, a clear refusal for an
// array header that would make the reader allocate more than a reply may hold.

#include "net/reply_reader.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <memory>
#include <string>

namespace redlock::net {
namespace {

struct ReaderDeleter {
  void operator()(redisReader* reader) const noexcept { free_reply_reader(reader); }
};
using ReaderPtr = std::unique_ptr<redisReader, ReaderDeleter>;

struct ReplyDeleter {
  void operator()(redisReply* reply) const noexcept { freeReplyObject(reply); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

// Feeds `bytes` and reads one reply; a reader error comes back as nullptr.
ReplyPtr read_one(redisReader* reader, const std::string& bytes) {
  if (redisReaderFeed(reader, bytes.data(), bytes.size()) != REDIS_OK) return nullptr;
  void* object = nullptr;
  if (redisReaderGetReply(reader, &object) != REDIS_OK) return nullptr;
  return ReplyPtr(static_cast<redisReply*>(object));
}

std::string integers(std::size_t count) {
  std::string out;
  for (std::size_t i = 0; i < count; ++i) out += ":1\r\n";
  return out;
}

TEST(ReplyReaderTest, BuildsNestedRepliesLikeHiredis) {
  ReaderPtr reader(create_reply_reader());
  ASSERT_TRUE(reader);
  ReplyPtr reply =
      read_one(reader.get(), "*4\r\n:42\r\n$3\r\nabc\r\n*2\r\n+OK\r\n-ERR no\r\n$-1\r\n");
  ASSERT_TRUE(reply) << reader->errstr;
  ASSERT_EQ(reply->type, REDIS_REPLY_ARRAY);
  ASSERT_EQ(reply->elements, 4u);
  EXPECT_EQ(reply->element[0]->integer, 42);
  EXPECT_EQ(std::string(reply->element[1]->str, reply->element[1]->len), "abc");
  ASSERT_EQ(reply->element[2]->elements, 2u);
  EXPECT_EQ(reply->element[2]->element[0]->type, REDIS_REPLY_STATUS);
  EXPECT_STREQ(reply->element[2]->element[1]->str, "ERR no");
  EXPECT_EQ(reply->element[3]->type, REDIS_REPLY_NIL);
  EXPECT_EQ(oversized_reply_error(reader.get()), "");
}

TEST(ReplyReaderTest, ACacheReusesTheObjectsOfFreedReplies) {
  ReplyCache cache;
  ReaderPtr reader(create_reply_reader(&cache));
  ASSERT_TRUE(reader);
  ReplyPtr first = read_one(reader.get(), "*2\r\n:1\r\n$6\r\nholder\r\n");
  ASSERT_TRUE(first);
  redisReply* outer = first.get();
  cache.free(first.release());
  // The next replies are built in the kept objects, zeroed: nothing of the old shows.
  ReplyPtr nil = read_one(reader.get(), "$-1\r\n");
  ASSERT_TRUE(nil);
  EXPECT_EQ(nil->type, REDIS_REPLY_NIL);
  EXPECT_EQ(nil->str, nullptr);
  EXPECT_EQ(nil->elements, 0u);
  ReplyPtr held = read_one(reader.get(), "$5\r\nvalue\r\n");
  ASSERT_TRUE(held);
  EXPECT_EQ(std::string(held->str, held->len), "value");
  ReplyPtr number = read_one(reader.get(), ":7\r\n");
  ASSERT_TRUE(number);
  EXPECT_EQ(number->integer, 7);
  const bool reused = nil.get() == outer || held.get() == outer || number.get() == outer;
  EXPECT_TRUE(reused) << "a freed object was not taken again";
  // Objects from the cache are plain hiredis objects: freeReplyObject (ReplyPtr's) frees them.
}

TEST(ReplyReaderTest, RefusesAHugeArrayHeaderBeforeAllocating) {
  ReaderPtr reader(create_reply_reader());
  // Under the default functions this header alone asks calloc for 3.6 GB.
  EXPECT_FALSE(read_one(reader.get(), "*454775808\r\n"));
  EXPECT_EQ(reader->err, REDIS_ERR_OOM);
  const std::string why = oversized_reply_error(reader.get());
  EXPECT_NE(why.find("454775808 elements"), std::string::npos) << why;
  EXPECT_NE(why.find("65536"), std::string::npos) << why;
}

TEST(ReplyReaderTest, CountsTheElementsOfNestedArraysTogether) {
  ReaderPtr reader(create_reply_reader());
  // Two siblings of 40,000 each: each fits alone, not both in one reply.
  const std::string bytes = "*2\r\n*40000\r\n" + integers(40000) + "*40000\r\n";
  EXPECT_FALSE(read_one(reader.get(), bytes));
  EXPECT_NE(oversized_reply_error(reader.get()).find("40000 elements"), std::string::npos);
}

TEST(ReplyReaderTest, TheBudgetIsPerReply) {
  ReaderPtr reader(create_reply_reader());
  const std::string big = "*60000\r\n" + integers(60000);
  for (int i = 0; i < 3; ++i) {
    ReplyPtr reply = read_one(reader.get(), big);
    ASSERT_TRUE(reply) << "reply " << i << ": " << reader->errstr;
    EXPECT_EQ(reply->elements, 60000u);
  }
}

TEST(ReplyReaderTest, AnEmptyArrayAndANilArrayAreFine) {
  ReaderPtr reader(create_reply_reader());
  ReplyPtr empty = read_one(reader.get(), "*0\r\n");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->elements, 0u);
  ReplyPtr nil = read_one(reader.get(), "*-1\r\n");
  ASSERT_TRUE(nil);
  EXPECT_EQ(nil->type, REDIS_REPLY_NIL);
}

}  // namespace
}  // namespace redlock::net

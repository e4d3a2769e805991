// The in-place reader of simple replies (net/simple_reply.hpp) against hiredis' own: for
// every reply shape, cut at every length, alone and followed by another reply, whatever
// the in-place reader reads, hiredis reads the same (type, value, text) from exactly the
// same bytes; what it leaves, hiredis reads. And the replies a lock cycle gets are read
// in place, or the reader saves nothing. Through the pipeline, a stream of every shape
// cut in two at every byte comes out whole and in order.

#include "net/simple_reply.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "net/pipeline.hpp"
#include "net/reply_reader.hpp"

namespace redlock::net {
namespace {

struct ReaderDeleter {
  void operator()(redisReader* reader) const noexcept { free_reply_reader(reader); }
};

std::vector<std::string> shapes() {
  const std::string bulk_512(max_simple_bulk, 'b');
  const std::string bulk_513(max_simple_bulk + 1, 'b');
  return {"+OK\r\n",
          "+\r\n",
          "+a\rb\r\n",
          "+a\r\r\n",
          "-ERR wrong\r\n",
          "-\r\n",
          "-NOSCRIPT No matching script\r\n",
          ":0\r\n",
          ":1\r\n",
          ":-1\r\n",
          ":-0\r\n",
          ":007\r\n",
          ":-007\r\n",
          ":+5\r\n",
          ":\r\n",
          ":-\r\n",
          ":1a\r\n",
          ":123456789012345678\r\n",
          ":-123456789012345678\r\n",
          ":9223372036854775807\r\n",
          ":1234567890123456789\r\n",
          ":-9223372036854775808\r\n",
          "$-0\r\n",
          "$00\r\n\r\n",
          "$1\r\n\r\r\n",
          "$-1\r\n",
          "$-2\r\n",
          "$0\r\n\r\n",
          "$3\r\nabc\r\n",
          "$3\r\na\rc\r\n",
          "$3\r\nabcXY",
          "$03\r\nabc\r\n",
          "$+3\r\nabc\r\n",
          "$x\r\n",
          "$32\r\n0123456789abcdef0123456789abcdef\r\n",
          "$512\r\n" + bulk_512 + "\r\n",
          "$513\r\n" + bulk_513 + "\r\n",
          "*1\r\n:1\r\n",
          "*-1\r\n",
          "_\r\n",
          "?\r\n"};
}

std::string describe(const redisReply& reply) {
  std::string text = std::to_string(reply.type) + ":";
  if (reply.type == REDIS_REPLY_INTEGER) return text + std::to_string(reply.integer);
  if (reply.str != nullptr) text.append(reply.str, reply.len);
  return text;
}

// Every shape at every length, alone and followed by another reply.
TEST(SimpleReply, ReadsWhatHiredisReadsFromTheSameBytes) {
  int read_in_place = 0;
  for (const auto& shape : shapes()) {
    for (const std::string& follower : {std::string(), std::string(":7\r\n")}) {
      for (std::size_t length = 0; length <= shape.size(); ++length) {
        const std::string bytes =
            shape.substr(0, length) + (length == shape.size() ? follower : "");
        redisReply mine{};
        const std::size_t used = read_simple_reply(bytes, mine);
        if (used == 0) continue;
        ++read_in_place;
        std::unique_ptr<redisReader, ReaderDeleter> reader(create_reply_reader());
        ASSERT_EQ(redisReaderFeed(reader.get(), bytes.data(), bytes.size()), REDIS_OK);
        void* object = nullptr;
        ASSERT_EQ(redisReaderGetReply(reader.get(), &object), REDIS_OK) << bytes;
        ASSERT_NE(object, nullptr) << "read in place, but not whole for hiredis: " << bytes;
        auto* theirs = static_cast<redisReply*>(object);
        EXPECT_EQ(describe(mine), describe(*theirs)) << bytes;
        EXPECT_EQ(used, reader->pos) << bytes;
        // In place: a text is a view of the reply's own bytes, not a copy and not past them.
        if (mine.str != nullptr) {
          EXPECT_GE(mine.str, bytes.data()) << bytes;
          EXPECT_LE(mine.str + mine.len, bytes.data() + used) << bytes;
        } else {
          EXPECT_TRUE(mine.type == REDIS_REPLY_INTEGER || mine.type == REDIS_REPLY_NIL) << bytes;
        }
        freeReplyObject(theirs);
      }
    }
  }
  EXPECT_GT(read_in_place, 0);
}

// The replies of a lock cycle (a grant's nil and integers, OK, a holder's value, an error)
// must take the in-place path, or the reader is dead code.
TEST(SimpleReply, ALockCyclesRepliesAreReadInPlace) {
  for (const std::string bytes :
       {"$-1\r\n", ":1\r\n", ":0\r\n", ":-2\r\n", "+OK\r\n", "-NOSCRIPT x\r\n",
        "$32\r\n0123456789abcdef0123456789abcdef\r\n"}) {
    redisReply reply{};
    EXPECT_EQ(read_simple_reply(bytes, reply), bytes.size()) << bytes;
  }
}

// A stream of every shape hiredis accepts, cut in two at every byte: the pipeline hands
// out the same replies in the same order as from one piece, whichever reader read each.
TEST(SimpleReply, APipelineReadsAStreamCutAnywhereWhole) {
  std::string stream = "+OK\r\n:1\r\n$-1\r\n*2\r\n:1\r\n$1\r\nx\r\n";
  stream += "$3\r\na\rc\r\n-ERR e\r\n:10\r\n";
  stream += "$" + std::to_string(max_simple_bulk + 1) + "\r\n";
  stream.append(max_simple_bulk + 1, 'L');
  stream += "\r\n:-7\r\n+a\rb\r\n";
  auto read_all = [](Pipeline& pipeline, std::string_view chunk, std::vector<std::string>& out) {
    NetError error;
    pipeline.feed(chunk.data(), chunk.size());
    for (;;) {
      ReplyPtr reply = pipeline.read(error);
      ASSERT_FALSE(error.code) << error.detail;
      if (!reply) return;
      std::string text = describe(*reply);
      if (reply->type == REDIS_REPLY_ARRAY) {
        for (std::size_t i = 0; i < reply->elements; ++i)
          text += "," + describe(*reply->element[i]);
      }
      out.push_back(text);
    }
  };
  std::vector<std::string> whole;
  {
    Pipeline pipeline(PipelineOptions{"node:1"});
    read_all(pipeline, stream, whole);
    EXPECT_FALSE(pipeline.mid_reply());
  }
  ASSERT_EQ(whole.size(), 10u);
  for (std::size_t cut = 0; cut <= stream.size(); ++cut) {
    Pipeline pipeline(PipelineOptions{"node:1"});
    std::vector<std::string> pieces;
    // Each chunk in its own buffer, overwritten once read, as a socket's read buffer is.
    std::string buffer = stream.substr(0, cut);
    read_all(pipeline, buffer, pieces);
    buffer.assign(buffer.size(), '#');
    buffer = stream.substr(cut);
    read_all(pipeline, buffer, pieces);
    EXPECT_EQ(pieces, whole) << "cut at " << cut;
    EXPECT_FALSE(pipeline.mid_reply()) << "cut at " << cut;
  }
}

}  // namespace
}  // namespace redlock::net

// A redisReply parsed from RESP text, for tests of code that reads hiredis replies:
// the wire bytes stay readable in the test and the reply is what hiredis would build.
#pragma once

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <memory>
#include <string>

namespace redlock::test {

struct ReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

inline ReplyPtr parse(const std::string& resp) {
  redisReader* reader = redisReaderCreate();
  redisReaderFeed(reader, resp.data(), resp.size());
  void* reply = nullptr;
  const int status = redisReaderGetReply(reader, &reply);
  redisReaderFree(reader);
  EXPECT_EQ(status, REDIS_OK);
  EXPECT_NE(reply, nullptr) << "incomplete RESP in the test";
  return ReplyPtr(static_cast<redisReply*>(reply));
}

}  // namespace redlock::test

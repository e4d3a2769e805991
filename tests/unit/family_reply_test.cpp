// How the client reads the lock family's script replies (scripts/family_scripts.hpp):
// each shape becomes the right node status, and a key of another kind becomes
// errc::wrong_kind naming what the key is, never a generic Redis error. Replies are
// parsed from RESP bytes by hiredis' own reader, as on the wire.

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <memory>
#include <string>

#include "client/family/held.hpp"

namespace redlock::detail {
namespace {

struct ReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

ReplyPtr parse(const std::string& resp) {
  redisReader* reader = redisReaderCreate();
  redisReaderFeed(reader, resp.data(), resp.size());
  void* reply = nullptr;
  const int status = redisReaderGetReply(reader, &reply);
  redisReaderFree(reader);
  EXPECT_EQ(status, REDIS_OK);
  EXPECT_NE(reply, nullptr) << "incomplete RESP in the test";
  return ReplyPtr(static_cast<redisReply*>(reply));
}

NodeReply read(const std::string& resp) {
  return interpret_family_reply(parse(resp).get(), "node-1");
}

TEST(FamilyReply, GrantsCarryAWritersToken) {
  auto plain = read("*2\r\n:1\r\n:0\r\n");
  EXPECT_EQ(plain.status, NodeStatus::granted);
  EXPECT_EQ(plain.token, 0u);
  auto fenced = read("*2\r\n:1\r\n:41\r\n");
  EXPECT_EQ(fenced.status, NodeStatus::granted);
  EXPECT_EQ(fenced.token, 41u);
  EXPECT_EQ(read("*1\r\n:1\r\n").status, NodeStatus::granted);  // extend, release, fence
}

TEST(FamilyReply, NothingOfTheCallersIsNotHeld) {
  EXPECT_EQ(read("*1\r\n:0\r\n").status, NodeStatus::not_held);
}

TEST(FamilyReply, ARefusalNamesTheHolderWhenItEndsAndWhy) {
  auto full = read("*4\r\n:0\r\n:912\r\n$6\r\nholder\r\n$14\r\n3 live holders\r\n");
  EXPECT_EQ(full.status, NodeStatus::held);
  EXPECT_EQ(full.remaining_ttl.count(), 912);
  EXPECT_EQ(full.holder, "holder");
  EXPECT_EQ(full.detail, "3 live holders");
  auto key_set = read("*5\r\n:0\r\n:50\r\n$3\r\nabc\r\n$3\r\nkey\r\n$1\r\nb\r\n");
  EXPECT_EQ(key_set.status, NodeStatus::held);
  EXPECT_EQ(key_set.detail, "key \"b\" held by abc");
}

TEST(FamilyReply, AKeyOfAnotherKindIsWrongKindNotARedisError) {
  auto exclusive = read("*2\r\n:-1\r\n$6\r\nstring\r\n");
  EXPECT_EQ(exclusive.status, NodeStatus::redis_error);
  EXPECT_EQ(exclusive.error, make_error_code(errc::wrong_kind));
  EXPECT_EQ(exclusive.detail, "the key is an exclusive lock");
  EXPECT_EQ(read("*2\r\n:-1\r\n$4\r\nzset\r\n").detail, "the key is a semaphore");
  EXPECT_EQ(read("*2\r\n:-1\r\n$4\r\nhash\r\n").detail, "the key is a read-write lock");
  EXPECT_EQ(read("*2\r\n:-1\r\n$4\r\nlist\r\n").detail,
            "the key is a Redis list, not a lock of this library");
  auto in_a_set = read("*3\r\n:-1\r\n$4\r\nzset\r\n$1\r\ns\r\n");
  EXPECT_EQ(in_a_set.detail, "key \"s\": the key is a semaphore");
}

TEST(FamilyReply, AnythingElseIsAProtocolErrorNamingTheNode) {
  for (const char* odd :
       {":7\r\n", "*0\r\n", "*2\r\n:2\r\n:0\r\n", "*3\r\n:0\r\n:1\r\n:2\r\n", "$2\r\nok\r\n"}) {
    auto reply = read(odd);
    EXPECT_EQ(reply.status, NodeStatus::redis_error) << odd;
    EXPECT_EQ(reply.error, make_error_code(errc::protocol_error)) << odd;
    EXPECT_NE(reply.detail.find("node-1"), std::string::npos) << reply.detail;
  }
}

}  // namespace
}  // namespace redlock::detail

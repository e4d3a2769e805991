// How the client reads the replies of the kinds' scripts (scripts/kind_scripts.hpp):
// each shape becomes the right node status, and a key of another kind becomes
// errc::wrong_kind naming what the key is, never a generic Redis error. Replies are
// parsed from RESP bytes by hiredis' own reader, as on the wire.

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <memory>
#include <string>
#include <vector>

#include "client/kinds/kind.hpp"
#include "client/operations/inspect.hpp"
#include "parsed_reply.hpp"

namespace redlock::detail {
namespace {

using test::parse;

NodeReply read(const std::string& resp) {
  return read_kind_reply(parse(resp).get(), "node-1");
}

NodeReply read_inspect(const std::string& resp) {
  return interpret_inspect_reply(parse(resp).get(), "node-1");
}

TEST(KindReply, GrantsCarryAWritersToken) {
  auto plain = read("*2\r\n:1\r\n:0\r\n");
  EXPECT_EQ(plain.status, NodeStatus::granted);
  EXPECT_EQ(plain.token, 0u);
  auto fenced = read("*2\r\n:1\r\n:41\r\n");
  EXPECT_EQ(fenced.status, NodeStatus::granted);
  EXPECT_EQ(fenced.token, 41u);
  EXPECT_EQ(read("*1\r\n:1\r\n").status, NodeStatus::granted);  // extend, release, fence
}

TEST(KindReply, AFencedKeySetsGrantCarriesOneTokenPerKey) {
  auto set = read("*4\r\n:1\r\n:0\r\n:7\r\n:41\r\n");
  EXPECT_EQ(set.status, NodeStatus::granted);
  EXPECT_EQ(set.token, 0u) << "a set has no single token";
  EXPECT_EQ(set.tokens, (std::vector<std::uint64_t>{7, 41}));
  EXPECT_TRUE(read("*2\r\n:1\r\n:0\r\n").tokens.empty());
  // A token that is not a positive integer is not a grant to trust.
  auto odd = read("*4\r\n:1\r\n:0\r\n:7\r\n$2\r\nxx\r\n");
  EXPECT_EQ(odd.status, NodeStatus::redis_error);
  EXPECT_EQ(odd.error, make_error_code(errc::protocol_error));
}

TEST(KindReply, NothingOfTheCallersIsNotHeld) {
  EXPECT_EQ(read("*1\r\n:0\r\n").status, NodeStatus::not_held);
}

TEST(KindReply, ARefusalNamesTheHolderWhenItEndsAndWhy) {
  auto full = read("*4\r\n:0\r\n:912\r\n$6\r\nholder\r\n$14\r\n3 live holders\r\n");
  EXPECT_EQ(full.status, NodeStatus::held);
  EXPECT_EQ(full.remaining_ttl.count(), 912);
  EXPECT_EQ(full.holder, "holder");
  EXPECT_EQ(full.detail, "3 live holders");
  auto key_set = read("*5\r\n:0\r\n:50\r\n$3\r\nabc\r\n$3\r\nkey\r\n$1\r\nb\r\n");
  EXPECT_EQ(key_set.status, NodeStatus::held);
  EXPECT_EQ(key_set.detail, "key \"b\" held by abc");
}

TEST(KindReply, AKeyOfAnotherKindIsWrongKindNotARedisError) {
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

TEST(KindReply, AnythingElseIsAProtocolErrorNamingTheNode) {
  for (const char* odd :
       {":7\r\n", "*0\r\n", "*2\r\n:2\r\n:0\r\n", "*3\r\n:0\r\n:1\r\n:2\r\n", "$2\r\nok\r\n"}) {
    auto reply = read(odd);
    EXPECT_EQ(reply.status, NodeStatus::redis_error) << odd;
    EXPECT_EQ(reply.error, make_error_code(errc::protocol_error)) << odd;
    EXPECT_NE(reply.detail.find("node-1"), std::string::npos) << reply.detail;
  }
}

TEST(InspectReply, EachKindAndRoleIsReadAsTheNodeGaveIt) {
  auto absent = read_inspect("*1\r\n$4\r\nnone\r\n");
  EXPECT_EQ(absent.kind, LockKind::none);
  EXPECT_EQ(absent.status, NodeStatus::not_held);
  EXPECT_TRUE(absent.holders.empty());

  auto owner = read_inspect("*4\r\n$6\r\nstring\r\n$1\r\no\r\n$3\r\nabc\r\n:912\r\n");
  EXPECT_EQ(owner.kind, LockKind::exclusive);
  EXPECT_EQ(owner.status, NodeStatus::held);
  EXPECT_EQ(owner.holder, "abc");
  EXPECT_EQ(owner.remaining_ttl.count(), 912);
  ASSERT_EQ(owner.holders.size(), 1u);
  EXPECT_EQ(owner.holders[0].role, HolderRole::owner);

  auto rw = read_inspect(
      "*10\r\n$4\r\nhash\r\n$1\r\nw\r\n$1\r\nx\r\n:5\r\n$1\r\nr\r\n$1\r\ny\r\n:6\r\n"
      "$1\r\ni\r\n$1\r\nz\r\n:7\r\n");
  EXPECT_EQ(rw.kind, LockKind::read_write);
  EXPECT_EQ(rw.status, NodeStatus::held);
  EXPECT_TRUE(rw.holder.empty());
  ASSERT_EQ(rw.holders.size(), 3u);
  EXPECT_EQ(rw.holders[0].role, HolderRole::writer);
  EXPECT_EQ(rw.holders[1].role, HolderRole::reader);
  EXPECT_EQ(rw.holders[1].value, "y");
  EXPECT_EQ(rw.holders[2].role, HolderRole::intent);
  EXPECT_EQ(rw.holders[2].remaining_ttl.count(), 7);

  auto permits = read_inspect("*4\r\n$4\r\nzset\r\n$1\r\np\r\n$1\r\nq\r\n:100\r\n");
  EXPECT_EQ(permits.kind, LockKind::semaphore);
  ASSERT_EQ(permits.holders.size(), 1u);
  EXPECT_EQ(permits.holders[0].role, HolderRole::permit);
}

TEST(InspectReply, AnIntentAloneHoldsNothing) {
  auto waiting = read_inspect("*4\r\n$4\r\nhash\r\n$1\r\ni\r\n$1\r\nz\r\n:7\r\n");
  EXPECT_EQ(waiting.status, NodeStatus::not_held);
  EXPECT_EQ(waiting.holders.size(), 1u);
}

TEST(InspectReply, AForeignTypeIsWrongKindAndOddRepliesAreProtocolErrors) {
  auto list = read_inspect("*1\r\n$4\r\nlist\r\n");
  EXPECT_EQ(list.kind, LockKind::other);
  EXPECT_EQ(list.status, NodeStatus::redis_error);
  EXPECT_EQ(list.error, make_error_code(errc::wrong_kind));
  EXPECT_EQ(list.detail, "the key is a Redis list, not a lock of this library");
  for (const char* odd :
       {"*0\r\n", ":1\r\n", "*2\r\n$4\r\nhash\r\n$1\r\nr\r\n",
        "*4\r\n$4\r\nhash\r\n$1\r\nq\r\n$1\r\nv\r\n:1\r\n",
        "*4\r\n$4\r\nhash\r\n$1\r\nr\r\n$1\r\nv\r\n$1\r\n1\r\n", "*2\r\n:1\r\n:0\r\n"}) {
    auto reply = read_inspect(odd);
    EXPECT_EQ(reply.error, make_error_code(errc::protocol_error)) << odd;
    EXPECT_EQ(reply.kind, LockKind::unknown) << odd;
    EXPECT_NE(reply.detail.find("node-1"), std::string::npos) << reply.detail;
  }
}

}  // namespace
}  // namespace redlock::detail

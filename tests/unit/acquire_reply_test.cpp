// How the client reads a node's answer to an acquire (member/acquire_reply.hpp), in both
// forms: the acquire script and SET key value NX PX ttl GET with its PTTL and TYPE. A key
// of another kind is errc::wrong_kind in both, never a failed node; a server that
// predates NX with GET is told apart from any other error. Replies are parsed from RESP
// bytes by hiredis' own reader, as on the wire.

#include "member/acquire_reply.hpp"

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <memory>
#include <string>

#include "parsed_reply.hpp"

namespace redlock::detail {
namespace {

using std::chrono::milliseconds;

using test::parse;
using test::ReplyPtr;

// A reply as the connection hands it over: an error reply comes with redis_error and its
// text as the detail.
struct Answer {
  ReplyPtr reply;
  std::string text;
  net::ReplyView view() const {
    if (reply->type == REDIS_REPLY_ERROR) {
      return {make_error_code(errc::redis_error), text, reply.get()};
    }
    return {{}, {}, reply.get()};
  }
};

Answer answer(const std::string& resp) {
  Answer a{parse(resp), {}};
  if (a.reply->type == REDIS_REPLY_ERROR) a.text.assign(a.reply->str, a.reply->len);
  return a;
}

TEST(AcquireScriptReply, GrantedCarriesTheToken) {
  auto reply = interpret_acquire_script(parse("*2\r\n:1\r\n:41\r\n").get(), "node-1");
  EXPECT_EQ(reply.status, NodeStatus::granted);
  EXPECT_EQ(reply.token, 41u);
}

TEST(AcquireScriptReply, HeldNamesTheHolderAndItsTtl) {
  auto reply =
      interpret_acquire_script(parse("*3\r\n:0\r\n:912\r\n$6\r\nholder\r\n").get(), "node-1");
  EXPECT_EQ(reply.status, NodeStatus::held);
  EXPECT_EQ(reply.holder, "holder");
  EXPECT_EQ(reply.remaining_ttl, milliseconds(912));
}

TEST(AcquireScriptReply, AKeyOfAnotherTypeIsWrongKind) {
  auto reply = interpret_acquire_script(parse("*2\r\n:-1\r\n$4\r\nhash\r\n").get(), "node-1");
  EXPECT_EQ(reply.status, NodeStatus::redis_error);
  EXPECT_EQ(reply.error, errc::wrong_kind);
  EXPECT_EQ(reply.detail, "the key is a read-write lock");
}

TEST(AcquireScriptReply, AnyOtherShapeIsAProtocolErrorNamingTheNode) {
  auto reply = interpret_acquire_script(parse(":7\r\n").get(), "node-1");
  EXPECT_EQ(reply.error, errc::protocol_error);
  EXPECT_EQ(reply.detail, "node-1: unexpected reply to the acquire script: integer 7");
}

TEST(SetNxGetReply, NilIsGranted) {
  auto nil = answer("$-1\r\n");
  EXPECT_EQ(classify_set_reply(nil.view()), SetAnswer::granted);
  auto reply = set_reply(SetAnswer::granted, nil.view(), "node-1");
  EXPECT_EQ(reply.status, NodeStatus::granted);
  EXPECT_EQ(reply.token, 0u);
}

TEST(SetNxGetReply, AStringIsTheHolderWithItsTtlStillUnknown) {
  auto held = answer("$6\r\nholder\r\n");
  EXPECT_EQ(classify_set_reply(held.view()), SetAnswer::held);
  auto reply = set_reply(SetAnswer::held, held.view(), "node-1");
  EXPECT_EQ(reply.status, NodeStatus::held);
  EXPECT_EQ(reply.holder, "holder");
  EXPECT_EQ(reply.remaining_ttl, milliseconds(-1));
}

TEST(SetNxGetReply, WrongTypeIsToldApartFromOtherErrors) {
  auto wrong = answer("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n");
  EXPECT_EQ(classify_set_reply(wrong.view()), SetAnswer::wrong_type);
  auto oom = answer("-OOM command not allowed when used memory > 'maxmemory'.\r\n");
  EXPECT_EQ(classify_set_reply(oom.view()), SetAnswer::failed);
  auto reply = set_reply(SetAnswer::failed, oom.view(), "node-1");
  EXPECT_EQ(reply.status, NodeStatus::redis_error);
  EXPECT_EQ(reply.error, errc::redis_error);
  EXPECT_EQ(reply.detail, oom.text);
}

TEST(SetNxGetReply, ASyntaxErrorMeansAServerBeforeRedis7) {
  auto old = answer("-ERR syntax error\r\n");
  EXPECT_EQ(classify_set_reply(old.view()), SetAnswer::unsupported);
}

TEST(SetNxGetReply, TransportFailuresAreFailures) {
  const net::ReplyView timeout{make_error_code(errc::timeout), "node-1: no reply within 50 ms",
                               nullptr};
  EXPECT_EQ(classify_set_reply(timeout), SetAnswer::failed);
  auto reply = set_reply(SetAnswer::failed, timeout, "node-1");
  EXPECT_EQ(reply.status, NodeStatus::timeout);
  const net::ReplyView dropped{make_error_code(errc::connection_error), "gone", nullptr};
  EXPECT_EQ(set_reply(SetAnswer::failed, dropped, "node-1").status, NodeStatus::connection_error);
}

TEST(SetNxGetReply, AnUnexpectedShapeIsAProtocolError) {
  auto odd = answer(":1\r\n");
  EXPECT_EQ(classify_set_reply(odd.view()), SetAnswer::failed);
  auto reply = set_reply(SetAnswer::failed, odd.view(), "node-1");
  EXPECT_EQ(reply.error, errc::protocol_error);
  EXPECT_EQ(reply.detail, "node-1: unexpected reply to SET NX GET: integer 1");
}

TEST(HolderTtl, APttlIsTheRemainingTtlAndAnythingElseUnknown) {
  EXPECT_EQ(remaining_ttl_of(answer(":912\r\n").view()), milliseconds(912));
  EXPECT_EQ(remaining_ttl_of(answer(":0\r\n").view()), milliseconds(0));
  EXPECT_EQ(remaining_ttl_of(answer(":-2\r\n").view()), milliseconds(-1)) << "key gone since";
  EXPECT_EQ(remaining_ttl_of(answer(":-1\r\n").view()), milliseconds(-1)) << "no TTL";
  EXPECT_EQ(remaining_ttl_of(answer("-NOPERM no pttl\r\n").view()), milliseconds(-1));
  EXPECT_EQ(remaining_ttl_of({make_error_code(errc::timeout), "late", nullptr}), milliseconds(-1));
}

TEST(WrongKind, TypeNamesTheKind) {
  auto zset = answer("+zset\r\n");
  auto reply = wrong_kind_from_type(zset.view());
  EXPECT_EQ(reply.status, NodeStatus::redis_error);
  EXPECT_EQ(reply.error, errc::wrong_kind);
  EXPECT_EQ(reply.detail, "the key is a semaphore");
  EXPECT_EQ(wrong_kind_from_type(answer("+hash\r\n").view()).detail,
            "the key is a read-write lock");
}

TEST(WrongKind, AFailedTypeIsStillWrongKindNeverAnUnreachableNode) {
  auto denied = answer("-NOPERM this user has no permissions to run the 'type' command\r\n");
  auto reply = wrong_kind_from_type(denied.view());
  EXPECT_EQ(reply.status, NodeStatus::redis_error);
  EXPECT_EQ(reply.error, errc::wrong_kind);
  EXPECT_EQ(wrong_kind_from_type({}).error, errc::wrong_kind) << "TYPE not sent at all";
}

std::string hello(const std::string& version) {
  return "*14\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$" +
         std::to_string(version.size()) + "\r\n" + version +
         "\r\n$5\r\nproto\r\n:2\r\n$2\r\nid\r\n:7\r\n$4\r\nmode\r\n$10\r\nstandalone\r\n"
         "$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n";
}

TEST(Hello, SetNxGetFromRedis7On) {
  EXPECT_TRUE(accepts_set_nx_get(answer(hello("7.0.15")).view()));
  EXPECT_TRUE(accepts_set_nx_get(answer(hello("7.2.4")).view()));
  EXPECT_TRUE(accepts_set_nx_get(answer(hello("10.0.0")).view()));
  EXPECT_FALSE(accepts_set_nx_get(answer(hello("6.2.14")).view()));
  EXPECT_FALSE(accepts_set_nx_get(answer(hello("6.0.0")).view()));
}

TEST(Hello, AnythingUnclearKeepsTheScript) {
  EXPECT_FALSE(accepts_set_nx_get(answer(hello("unknown")).view()));
  EXPECT_FALSE(accepts_set_nx_get(answer(hello("")).view()));
  EXPECT_FALSE(accepts_set_nx_get(answer("-ERR unknown command 'HELLO'\r\n").view()));
  EXPECT_FALSE(accepts_set_nx_get(answer("-NOPERM no hello\r\n").view()));
  EXPECT_FALSE(accepts_set_nx_get(answer("+OK\r\n").view()));
  EXPECT_FALSE(accepts_set_nx_get(answer("*2\r\n$7\r\nversion\r\n:7\r\n").view()));
  EXPECT_FALSE(accepts_set_nx_get({make_error_code(errc::timeout), "late", nullptr}));
}

}  // namespace
}  // namespace redlock::detail

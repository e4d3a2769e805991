// The Node seam's contract for a closed RedisNode: a call made after close() is still
// answered exactly once, with cancelled, and never from inside the call that made it.

#include "member/node.hpp"

#include <gtest/gtest.h>
#include <uv.h>

#include <chrono>

#include "client/kinds/kind.hpp"
#include "net/endpoint.hpp"

namespace redlock::detail {
namespace {

using namespace std::chrono_literals;

TEST(RedisNode, CallsAfterCloseAreAnsweredCancelledOnALaterLoopTurn) {
  uv_loop_t loop;
  ASSERT_EQ(uv_loop_init(&loop), 0);
  {
    net::ConnectionOptions options;
    auto endpoint = net::parse_endpoint("redis://127.0.0.1:1");  // never reached
    ASSERT_TRUE(endpoint);
    options.endpoint = *endpoint;
    auto node = make_redis_node(&loop, std::move(options));
    node->close();

    int calls = 0;
    NodeReply seen;
    // The exclusive lock's calls, as its kind assembles them.
    const auto kind = Kind::exclusive("key");
    const Kind::Attempt attempt("value", 10s, false, HolderTtl::after_refusal);
    kind.send_acquire(*node, attempt, 50ms, [&](NodeReply reply) {
      ++calls;
      seen = std::move(reply);
    });
    kind.send_release(*node, "value", Announce::no, 50ms, [&](NodeReply) { ++calls; });
    EXPECT_EQ(calls, 0) << "answered from inside the call";
    node.reset();  // the answer does not depend on the node living on
    uv_run(&loop, UV_RUN_DEFAULT);
    EXPECT_EQ(calls, 2);
    EXPECT_EQ(seen.status, NodeStatus::cancelled);
    EXPECT_EQ(seen.error, make_error_code(errc::cancelled));
    EXPECT_NE(seen.detail.find("127.0.0.1:1: connection closed"), std::string::npos) << seen.detail;
  }
  EXPECT_EQ(uv_loop_close(&loop), 0) << "a handle was left open";
}

}  // namespace
}  // namespace redlock::detail

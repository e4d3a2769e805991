// The Redlock client over TLS on five real nodes, as the ACL user of docs/security.md:
// a lock round trip with a fencing token, and a wrong CA reported per node.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "lock_user_rule.hpp"
#include "support/redis_server.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using test::RedisCluster;
using test::RedisServerOptions;
using test::test_certificates;
using ::testing::HasSubstr;

RedisServerOptions tls_nodes_with_lock_user() {
  RedisServerOptions options;
  options.tls = true;
  options.extra_args = security_test::lock_user_arguments();
  return options;
}

Options client_options(RedisCluster& cluster) {
  Options options;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    options.nodes.push_back("rediss://" + security_test::lock_user + ":" +
                            security_test::lock_user_password +
                            "@127.0.0.1:" + std::to_string(cluster[i].port()));
  }
  const auto& files = test_certificates();
  options.tls.ca_file = files.ca_cert;
  options.tls.cert_file = files.client_cert;
  options.tls.key_file = files.client_key;
  // The first round also connects and shakes hands with every node; sanitizer builds on
  // two shared cores need more than the default 50 ms for that.
  options.node_timeout = 2s;
  return options;
}

// The client answers once a quorum answered; the other nodes follow shortly.
bool eventually_on_every_node(RedisCluster& cluster, const std::string& key, long long exists) {
  const auto give_up = std::chrono::steady_clock::now() + 5s;
  for (;;) {
    std::size_t agreeing = 0;
    for (std::size_t i = 0; i < cluster.size(); ++i) {
      agreeing += cluster[i].command({"EXISTS", key}).integer == exists;
    }
    if (agreeing == cluster.size()) return true;
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(10ms);
  }
}

TEST(TlsClient, LockRoundTripOnFiveNodes) {
  RedisCluster cluster(5, tls_nodes_with_lock_user());
  auto client = Client::create(client_options(cluster));
  auto lock = client->lock("lock:orders", {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(lock) << lock.error().message();
  EXPECT_GT(lock->validity(), 9s);
  ASSERT_TRUE(lock->fencing_token().has_value());
  EXPECT_GT(*lock->fencing_token(), 0u);
  EXPECT_TRUE(eventually_on_every_node(cluster, "lock:orders", 1));

  auto contender = client->try_lock("lock:orders", 10s);
  ASSERT_FALSE(contender);
  EXPECT_EQ(contender.error(), errc::conflict) << contender.error().message();

  auto released = lock->unlock();
  EXPECT_TRUE(released) << released.error().message();
  EXPECT_TRUE(eventually_on_every_node(cluster, "lock:orders", 0));
}

TEST(TlsClient, WrongCaIsReportedPerNode) {
  RedisCluster cluster(5, tls_nodes_with_lock_user());
  Options options = client_options(cluster);
  options.tls.ca_file = test_certificates().other_ca_cert;
  auto client = Client::create(options);
  auto lock = client->try_lock("lock:orders", 10s);
  ASSERT_FALSE(lock);
  EXPECT_EQ(lock.error(), errc::quorum_unreachable) << lock.error().message();
  ASSERT_EQ(lock.error().nodes().size(), 5u);
  // The round is decided as soon as no quorum is possible, so up to two nodes may still
  // be pending then; every node that answered failed verification.
  int verify_failures = 0;
  for (std::size_t i = 0; i < cluster.size(); ++i) {
    const NodeOutcome& node = lock.error().nodes()[i];
    if (node.status == NodeStatus::pending) continue;
    ++verify_failures;
    EXPECT_EQ(node.status, NodeStatus::connection_error);
    EXPECT_EQ(node.error, make_error_code(errc::tls_error)) << node.detail;
    EXPECT_THAT(node.detail,
                HasSubstr("TLS handshake with 127.0.0.1:" + std::to_string(cluster[i].port()) +
                          " failed: certificate verify failed"));
    EXPECT_THAT(lock.error().message(), HasSubstr(node.detail));
  }
  EXPECT_GE(verify_failures, 3);
}

}  // namespace
}  // namespace redlock

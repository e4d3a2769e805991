#include "harness.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <memory>

namespace redlock::badinput {

namespace {

// The cluster is started on first use (a filtered run that needs no node starts none)
// and stopped after the last test, while gtest still reports: a static destructor would
// run after main, where a failure to stop could no longer be reported.
class HealthyNodes final : public ::testing::Environment {
 public:
  test::RedisCluster& get() {
    if (!cluster_) cluster_ = std::make_unique<test::RedisCluster>(5);
    return *cluster_;
  }
  void TearDown() override { cluster_.reset(); }

 private:
  std::unique_ptr<test::RedisCluster> cluster_;
};

// gtest owns registered environments.
HealthyNodes* const healthy_nodes =
    static_cast<HealthyNodes*>(::testing::AddGlobalTestEnvironment(new HealthyNodes));

}  // namespace

test::RedisCluster& healthy() {
  return healthy_nodes->get();
}

std::vector<std::string> healthy_urls(std::size_t count) {
  auto urls = healthy().urls();
  urls.resize(count);
  return urls;
}

Options options(std::vector<std::string> nodes) {
  Options options;
  options.nodes = std::move(nodes);
  options.node_timeout = node_timeout;
  options.connect_timeout = node_timeout;
  options.reconnect_min = 5ms;
  options.reconnect_max = 50ms;
  return options;
}

std::string test_key() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string key = "badinput:";
  key += info->test_suite_name();
  key += ':';
  key += info->name();
  for (char& c : key) {
    if (std::isspace(static_cast<unsigned char>(c))) c = '_';
  }
  return key;
}

std::vector<std::string> interleave(const std::vector<std::string>& healthy,
                                    const std::vector<std::string>& bad,
                                    const std::vector<std::size_t>& positions) {
  std::vector<std::string> nodes;
  std::size_t next_healthy = 0;
  std::size_t next_bad = 0;
  while (nodes.size() < healthy.size() + bad.size()) {
    if (next_bad < positions.size() && positions[next_bad] == nodes.size()) {
      nodes.push_back(bad.at(next_bad++));
    } else {
      nodes.push_back(healthy.at(next_healthy++));
    }
  }
  return nodes;
}

void expect_not_held(Client& client, const std::string& key,
                     const std::vector<std::size_t>& positions) {
  auto status = client.status(key);
  ASSERT_TRUE(status) << status.error().message();
  for (std::size_t i : positions) {
    const NodeOutcome& node = status->at(i);
    EXPECT_EQ(node.status, NodeStatus::not_held) << describe(node);
  }
}

long long elapsed_ms(Clock::time_point since) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - since).count();
}

}  // namespace redlock::badinput

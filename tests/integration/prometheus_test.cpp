// redlock::prometheus against five real redis-server processes: after real lock traffic
// (acquired, conflict, a wait woken by a release, extend, a node killed and restarted),
// the registry's text exposition holds the numbers that traffic must have produced.

#include <gtest/gtest.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

#include <algorithm>
#include <chrono>
#include <regex>
#include <string>
#include <thread>

#include <redlock/prometheus.hpp>
#include <redlock/redlock.hpp>
#include <redlock/testing/eventually.hpp>

#include "support/lock_nodes_fixture.hpp"
#include "support/sharded_cluster.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;

class PrometheusTest : public test::LockNodesTest {
 protected:
  std::string exposition() { return ::prometheus::TextSerializer().Serialize(registry.Collect()); }
  /// The value of the series `series` (name and labels exactly as exposed), or -1.
  double value(const std::string& series) {
    const auto text = exposition();
    const auto at = text.find("\n" + series + " ");
    if (at == std::string::npos) return -1;
    return std::stod(text.substr(at + series.size() + 2));
  }
  /// Polls until the value of `series` satisfies `holds`, for at most 5 s.
  template <typename Predicate>
  bool eventually_that(const std::string& series, Predicate holds) {
    return redlock::testing::eventually([&] { return holds(value(series)); }, 5s, 5ms);
  }
  /// Polls until `series` has `expected`, for at most 5 s.
  bool eventually(const std::string& series, double expected) {
    return eventually_that(series, [expected](double v) { return v == expected; });
  }

  ::prometheus::Registry registry;
};

TEST_F(PrometheusTest, TheExpositionCountsRealLockTraffic) {
  auto o = options();
  o.observer = prometheus::make_observer(registry, {{"client", "test"}});
  o.retry_delay = 5s;  // only the release announcement wakes the waiter in time
  auto client = Client::create(o);
  auto other = Client::create(options());
  for (const auto& url : cluster().urls()) {
    ASSERT_TRUE(eventually("redlock_node_up{client=\"test\",node=\"" + url + "\"}", 1))
        << exposition();
  }

  auto lock = client->try_lock("prom:a", 10s);
  ASSERT_TRUE(lock);
  ASSERT_TRUE(lock->extend(10s));
  auto held = other->try_lock("prom:b", 10s);
  ASSERT_TRUE(held);
  ASSERT_FALSE(client->try_lock("prom:b", 10s));  // conflict
  EXPECT_EQ(value("redlock_locks_held{client=\"test\"}"), 1);

  auto waited = lock_while_released(*client, "prom:b", *held, 100ms, [this] {
    eventually_that("redlock_attempts_total{client=\"test\",outcome=\"conflict\"}",
                    [](double v) { return v >= 2; });
  });
  ASSERT_TRUE(waited);
  ASSERT_TRUE(lock->unlock());

  EXPECT_EQ(value("redlock_acquisitions_total{client=\"test\",outcome=\"acquired\"}"), 2);
  EXPECT_EQ(value("redlock_acquisitions_total{client=\"test\",outcome=\"conflict\"}"), 1);
  // The try_lock's attempt and at least the waiter's first (a wake that comes while an
  // attempt is in flight can cost the waiter one more).
  EXPECT_GE(value("redlock_attempts_total{client=\"test\",outcome=\"conflict\"}"), 2);
  EXPECT_GE(value("redlock_wakes_total{cause=\"announcement\",client=\"test\"}"), 1);
  EXPECT_EQ(value("redlock_locks_held{client=\"test\"}"), 1);
  EXPECT_EQ(value("redlock_waiters{client=\"test\"}"), 0);
  EXPECT_EQ(
      value("redlock_operations_total{client=\"test\",operation=\"extend\",result=\"confirmed\"}"),
      1);
  EXPECT_EQ(
      value("redlock_operations_total{client=\"test\",operation=\"release\",result=\"confirmed\"}"),
      1);
  // Three acquisitions ended, two acquired; the waited one took at least 100 ms.
  EXPECT_EQ(value("redlock_acquire_duration_seconds_count{client=\"test\",outcome=\"acquired\"}"),
            2);
  EXPECT_GE(value("redlock_acquire_duration_seconds_sum{client=\"test\",outcome=\"acquired\"}"),
            0.09);
  EXPECT_EQ(value("redlock_acquire_duration_seconds_bucket{client=\"test\",outcome=\"acquired\",le="
                  "\"+Inf\"}"),
            2);

  // A node killed and restarted: down, then back. A reconnect can land in the dying
  // process's listen backlog and go down again at once (observer.hpp), so the restart
  // waits for a refused reconnect, and what follows it is judged: one more reconnect,
  // and as many downs as reconnects.
  const auto node = "{client=\"test\",node=\"" + cluster()[0].url() + "\"}";
  const auto event = [&](const std::string& kind) {
    return "redlock_node_events_total{client=\"test\",event=\"" + kind + "\",node=\"" +
           cluster()[0].url() + "\"}";
  };
  cluster()[0].kill9();
  ASSERT_TRUE(eventually_that(event("connect_failed"), [](double v) { return v >= 1; }))
      << exposition();
  EXPECT_EQ(value("redlock_node_up" + node), 0);
  const auto reconnects_before = std::max(0.0, value("redlock_node_reconnects_total" + node));
  cluster()[0].restart();
  ASSERT_TRUE(eventually("redlock_node_reconnects_total" + node, reconnects_before + 1))
      << exposition();
  EXPECT_EQ(value("redlock_node_up" + node), 1);
  EXPECT_EQ(value(event("down")), reconnects_before + 1) << exposition();

  // The restarted process has another run_id: the member is guarded (its grants do not
  // count) until a time the gauge gives, the fleet's longest ttl (30 s here) from now.
  ASSERT_TRUE(eventually(event("guarded"), 1)) << exposition();
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const double until = value("redlock_member_guarded_until_seconds" + node);
  EXPECT_GT(until, now + 20) << exposition();
  EXPECT_LT(until, now + 31) << exposition();
}

// A cluster member's redirections and slot maps are counted per member, in the same
// redlock_node_events_total as every other node event.
TEST_F(PrometheusTest, AClusterMembersRedirectionsAndSlotMapsAreCounted) {
  test::ShardedCluster sharded;
  Options o;
  o.nodes = {sharded.url()};
  o.observer = prometheus::make_observer(registry, {{"client", "test"}});
  auto client = Client::create(o);
  const auto event = [&](const std::string& kind) {
    return "redlock_node_events_total{client=\"test\",event=\"" + kind + "\",node=\"" +
           sharded.url() + "\"}";
  };
  const std::string key = "prom:cluster";
  auto lock = client->try_lock(key, 10s);
  ASSERT_TRUE(lock) << lock.error().message();
  EXPECT_EQ(value(event("slot_map_read")), 1) << exposition();
  test::RedisServer& owner = sharded.owner_of(key);
  test::RedisServer& target = &owner == &sharded.server(0) ? sharded.server(1) : sharded.server(0);
  sharded.move_slot(static_cast<std::uint16_t>(owner.command({"CLUSTER", "KEYSLOT", key}).integer),
                    target);
  ASSERT_TRUE(lock->extend(10s));
  EXPECT_EQ(value(event("moved")), 1) << exposition();
  EXPECT_TRUE(eventually(event("slot_map_read"), 2)) << exposition();
  EXPECT_EQ(value(event("ask")), -1) << "no ASK yet";
  ASSERT_TRUE(lock->unlock());
}

}  // namespace
}  // namespace redlock

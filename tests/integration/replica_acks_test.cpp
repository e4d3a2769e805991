// Grants that count only once replicas acknowledged them (member_guard.replicas_to_ack):
// three real members, each a master with a real replica. With R = 1 a grant counts and
// is on the replica when the lock is handed out; with replicas that do not answer, the
// grants are not counted and the error names the WAIT; extends follow the same rule.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "replicated_member.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using test::ReplicatedMember;

class ReplicaAcksTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    members_ = new std::vector<std::unique_ptr<ReplicatedMember>>();
    for (int i = 0; i < 3; ++i) {
      members_->push_back(std::make_unique<ReplicatedMember>());
      ASSERT_TRUE(test::replica_online(members_->back()->master));
    }
  }
  static void TearDownTestSuite() {
    delete members_;
    members_ = nullptr;
  }
  void SetUp() override {
    for (auto& member : *members_) member->master.command({"FLUSHALL"});
  }
  void TearDown() override {
    for (auto& member : *members_) {
      if (member->replica.paused()) member->replica.resume();
      member->master.command({"CONFIG", "SET", "hz", "10"});
    }
  }

  // `node_timeout` short where a WAIT is to fail (it waits three quarters of it).
  static Options acked_by(int replicas, std::chrono::milliseconds node_timeout = 200ms) {
    Options opts;
    for (auto& member : *members_) opts.nodes.push_back(member->master.url());
    opts.node_timeout = node_timeout;
    opts.member_guard.replicas_to_ack = replicas;
    return opts;
  }

  static ReplicatedMember& member(std::size_t i) { return *(*members_)[i]; }

 private:
  static inline std::vector<std::unique_ptr<ReplicatedMember>>* members_ = nullptr;
};

// Acknowledged by the replicas: handed out, and a quorum of replicas has the lock
// already, so a failover right after the lock is handed out keeps it. The replication
// links are slowed down (60 ms), so that a lock handed out without waiting for them
// would not be there yet.
TEST_F(ReplicaAcksTest, AGrantTheReplicasAcknowledgedCountsAndIsOnThem) {
  for (std::size_t i = 0; i < 3; ++i) member(i).link->set_latency(chaos::Direction::down, 60ms);
  auto client = Client::create(acked_by(1, 2s));
  auto lock = client->try_lock("acks:granted", 5s);
  for (std::size_t i = 0; i < 3; ++i) member(i).link->set_latency(chaos::Direction::down, 0ms);
  ASSERT_TRUE(lock) << lock.error().message();
  int on_replicas = 0;
  for (std::size_t i = 0; i < 3; ++i) {
    on_replicas += member(i).replica.command({"GET", "acks:granted"}).str == lock->value();
  }
  EXPECT_GE(on_replicas, 2) << "handed out before a quorum of replicas acknowledged";
}

// Two of three replicas stopped: their masters grant, but WAIT 1 counts no replica, so no
// quorum; the error names the WAIT. Without the option the same lock is handed out.
TEST_F(ReplicaAcksTest, AGrantNoReplicaAcknowledgedIsNotCountedAndTheErrorNamesTheWait) {
  member(0).replica.pause();
  member(1).replica.pause();
  auto client = Client::create(acked_by(1));
  auto refused = client->try_lock("acks:refused", 5s);
  ASSERT_FALSE(refused) << "counted grants that no replica acknowledged";
  EXPECT_EQ(refused.error().code(), make_error_code(errc::quorum_unreachable))
      << refused.error().message();
  // "acknowledged by 0 replica(s)", or on a loaded machine "failed: ... no reply within".
  EXPECT_NE(refused.error().message().find("not counted: WAIT 1 "), std::string::npos)
      << refused.error().message();
  EXPECT_NE(refused.error().message().find(member(0).master.url()), std::string::npos)
      << refused.error().message();

  // Another key: the refused attempt's grants may still be on their way out.
  auto unacked = Client::create(acked_by(0, 1s));
  auto granted = unacked->try_lock("acks:control", 5s);
  EXPECT_TRUE(granted) << granted.error().message();
}

// An extend follows the grant's rule.
TEST_F(ReplicaAcksTest, AnExtendNoReplicaAcknowledgedIsNotCounted) {
  auto client = Client::create(acked_by(1));
  auto lock = client->try_lock("acks:extend", 5s);
  ASSERT_TRUE(lock) << lock.error().message();
  member(1).replica.pause();
  member(2).replica.pause();
  auto extended = lock->extend(5s);
  ASSERT_FALSE(extended) << "extended on grants no replica acknowledged";
  EXPECT_NE(extended.error().message().find("WAIT 1"), std::string::npos)
      << extended.error().message();
}

// Replicas down, many attempts at once on one client: Redis blocks a connection while
// its WAIT waits, so WAITs pipelined one per grant would answer one after another, each
// up to three quarters of the node timeout, the lock commands behind them would time
// out, and the connection would be dropped as dead. Every attempt must instead be
// refused promptly for the WAIT, and no member's connection dropped.
TEST_F(ReplicaAcksTest,
       ConcurrentAttemptsDuringAReplicaOutageAreRefusedPromptlyWithoutDroppingTheConnection) {
  struct Drops : Observer {
    std::mutex mutex;
    std::vector<std::string> seen;
    void on_node(const NodeEvent& event) override {
      if (event.kind != NodeEventKind::down) return;
      std::lock_guard<std::mutex> hold(mutex);
      seen.emplace_back(std::string(event.node) + ": " + std::string(event.detail));
    }
  };
  auto drops = std::make_shared<Drops>();
  auto opts = acked_by(1, 200ms);
  opts.observer = drops;
  auto client = Client::create(opts);
  // Every replica acknowledges before the outage: a replica just synced is counted from
  // its first acknowledgement on, and the one left running must answer WAIT at once.
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(member(i).master.command({"SET", "acks:outage:before", "1"}).is_status("OK"));
    ASSERT_EQ(member(i).master.command({"WAIT", "1", "5000"}).integer, 1) << "member " << i;
  }
  auto before = client->try_lock("acks:outage:before:lock", 5s);
  ASSERT_TRUE(before) << before.error().message();
  ASSERT_TRUE(before->unlock());
  // A WAIT's timeout is checked when the server wakes, at worst every 1000 / hz ms (100 by
  // default) while it has nothing else to do: a WAIT that times out blocks its connection
  // that much longer. Ten times as often here, so that a WAIT honours the 200 ms node
  // timeout's share (TearDown sets the default back).
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(member(i).master.command({"CONFIG", "SET", "hz", "100"}).is_status("OK"));
  }
  member(0).replica.pause();
  member(1).replica.pause();

  constexpr int threads = 16;
  std::atomic<int> attempts{0};
  std::atomic<long long> slowest_ms{0};
  std::mutex mutex;
  std::vector<std::string> wrong;  // attempts not refused for the WAIT alone
  // Longer than the dead-node bound (200 ms + 2 s), which WAITs queued one per grant hit.
  const auto until = std::chrono::steady_clock::now() + 3s;
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      for (int n = 0; std::chrono::steady_clock::now() < until; ++n) {
        const auto start = std::chrono::steady_clock::now();
        auto lock =
            client->try_lock("acks:outage:" + std::to_string(t) + ":" + std::to_string(n), 5s);
        const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::steady_clock::now() - start)
                              .count();
        ++attempts;
        long long seen = slowest_ms.load();
        while (took > seen && !slowest_ms.compare_exchange_weak(seen, took)) {
        }
        const std::string why = lock ? "granted" : lock.error().message();
        // "not counted: WAIT 1 acknowledged by 0 replica(s)", or "... failed: no reply
        // within" for a WAIT left little time by the one it queued behind; never a command
        // of the attempt timing out, nor a connection dropped.
        if (lock || lock.error().code() != make_error_code(errc::quorum_unreachable) ||
            why.find("not counted: WAIT 1 ") == std::string::npos ||
            why.find(": timeout (") != std::string::npos ||
            why.find("connection") != std::string::npos) {
          std::lock_guard<std::mutex> hold(mutex);
          wrong.push_back(std::to_string(took) + " ms: " + why);
        }
      }
    });
  }
  for (auto& worker : workers) worker.join();
  std::this_thread::sleep_for(300ms);  // a drop found late is still reported

  std::lock_guard<std::mutex> hold(drops->mutex);
  EXPECT_TRUE(drops->seen.empty())
      << drops->seen.size() << " drop(s), the first: " << drops->seen.front();
  EXPECT_TRUE(wrong.empty()) << wrong.size() << " of " << attempts.load()
                             << " attempts not refused for the WAIT, the first: " << wrong.front();
  // Each attempt waits for its slowest member, whose answer is due within the node
  // timeout (200 ms); the rest is slack for a loaded machine.
  EXPECT_LE(slowest_ms.load(), 600) << "of " << attempts.load() << " attempts";
  EXPECT_GT(attempts.load(), threads);
}

// Bad input names the field.
TEST_F(ReplicaAcksTest, ANegativeCountIsRejectedNamingTheField) {
  try {
    (void)Client::create(acked_by(-1));
    FAIL() << "accepted replicas_to_ack = -1";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("member_guard.replicas_to_ack"), std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace redlock

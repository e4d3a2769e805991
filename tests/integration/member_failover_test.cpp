// Members that fail over (Options::member_guard): a member's address moved to a promoted
// replica that had not received the lock's write, and a member demoted and promoted again
// in place, which replaced its data with another server's. Real redis-server masters and
// replicas; the member's address is a fault proxy that is retargeted, as an operator or
// Sentinel moves a member, and its replication link another one, paused so that the
// replica misses writes.

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "member_guard_fixture.hpp"
#include "replicated_member.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

using MemberFailoverTest = test::MemberGuardTest;
using test::info_field;
using test::quick_master;
using test::ReplicatedMember;
using test::replication_reads;

// Three of five members fail over to replicas that missed the holder's write. A contender
// that knew the old masters must not get the lock on the promoted replicas' grants while
// the holder's lock lasts, and is told why; it gets the lock once the guard has passed.
TEST_F(MemberFailoverTest, APromotedReplicaThatMissedTheLockDoesNotCountUntilTheBound) {
  std::vector<std::unique_ptr<ReplicatedMember>> members;
  auto opts = guarded(3s);
  for (std::size_t node = 0; node < 3; ++node) {
    members.push_back(std::make_unique<ReplicatedMember>());
    ASSERT_TRUE(replication_reads(members.back()->replica, "master_link_status", "up"));
    opts.nodes[node] = members.back()->url();
  }
  auto holder = Client::create(opts);
  auto contender = Client::create(opts);
  meet(*contender);
  for (auto& member : members) member->link->set_mode(chaos::ProxyMode::partition);
  auto lock = holder->try_lock("failover:held", 3s);
  ASSERT_TRUE(lock) << lock.error().message();
  const auto valid_until = Clock::now() + lock->validity();
  for (auto& member : members) {
    ASSERT_TRUE(member->replica.command({"GET", "failover:held"}).is_nil())
        << "the replica received the write: nothing would be lost";
    member->failover();
  }
  ASSERT_TRUE(learns_restart_of(*contender, {0, 1, 2}));

  auto during = contender->lock("failover:held", {.ttl = 3s, .wait = 500ms});
  ASSERT_FALSE(during) << "two holders: the promoted replicas' grants counted";
  EXPECT_LT(Clock::now(), valid_until);
  const std::string message = during.error().message();
  EXPECT_EQ(during.error().code(), make_error_code(errc::quorum_unreachable)) << message;
  EXPECT_NE(message.find(members[0]->url()), std::string::npos) << message;
  EXPECT_NE(message.find("guarded for another"), std::string::npos) << message;
  EXPECT_NE(message.find("promoted replica"), std::string::npos) << message;

  auto after = contender->lock("failover:held", {.ttl = 3s, .wait = 5s});
  ASSERT_TRUE(after) << after.error().message();
  EXPECT_GE(Clock::now(), valid_until) << "handed out while the first holder was valid";
}

// With replicas_to_ack = 1 every grant reached a replica, and still a promoted replica's
// grants do not count for the bound: WAIT does not say which replica acknowledged, so a
// changed identity is guarded whatever R is (docs/safety.md, "Replica acknowledgements").
// Three members, each with one replica; all three fail over.
TEST_F(MemberFailoverTest, AcknowledgedGrantsDoNotLiftTheGuardOfAPromotedReplica) {
  std::vector<std::unique_ptr<ReplicatedMember>> members;
  auto opts = guarded(10s);
  opts.member_guard.replicas_to_ack = 1;
  // Room for the WAITs (1.5 s each) on a loaded machine; ttls above 2 x node_timeout.
  opts.node_timeout = 2s;
  opts.nodes.clear();
  for (std::size_t node = 0; node < 3; ++node) {
    members.push_back(std::make_unique<ReplicatedMember>());
    ASSERT_TRUE(test::replica_online(members.back()->master));
    opts.nodes.push_back(members.back()->url());
  }
  auto client = Client::create(opts);
  meet(*client);
  auto lock = client->try_lock("failover:acked", 10s);
  ASSERT_TRUE(lock) << lock.error().message();
  // Handed out at the quorum's second grant: the third may still be on its way.
  int on_replicas = 0;
  for (auto& member : members) {
    on_replicas += member->replica.command({"GET", "failover:acked"}).str == lock->value();
  }
  ASSERT_GE(on_replicas, 2) << "acknowledged, yet not on the replicas";
  // Each old master then replicates its promoted replica, so that WAIT 1 is answered and
  // only the guard stands between the promoted replicas' grants and a quorum.
  for (auto& member : members) {
    member->failover();
    member->master.command({"REPLICAOF", "127.0.0.1", std::to_string(member->replica.port())});
  }
  for (auto& member : members) ASSERT_TRUE(test::replica_online(member->replica));
  auto free_key = client->lock("failover:free", {.ttl = 10s, .wait = 1s});
  ASSERT_FALSE(free_key) << "a promoted replica counted at once because R >= 1";
  EXPECT_EQ(free_key.error().code(), make_error_code(errc::quorum_unreachable))
      << free_key.error().message();
  EXPECT_NE(free_key.error().message().find("promoted replica"), std::string::npos)
      << free_key.error().message();
}

// The same server, demoted and promoted again (its data replaced by a full sync from a
// server without the lock), with its clients' connections closed as Sentinel does: the
// run_id is unchanged, the replication id is not, and that is what guards it.
TEST_F(MemberFailoverTest, AServerDemotedAndPromotedInPlaceIsGuardedByItsReplicationId) {
  test::RedisServer empty{quick_master()};
  auto holder = Client::create(guarded(3s));
  auto contender = Client::create(guarded(3s));
  meet(*contender);
  auto lock = holder->try_lock("failover:in-place", 3s);
  ASSERT_TRUE(lock) << lock.error().message();
  const auto valid_until = Clock::now() + lock->validity();
  for (std::size_t node = 0; node < 3; ++node) {
    auto& server = cluster()[node];
    const std::string run_id = info_field(server.command({"INFO", "server"}).str, "run_id");
    ASSERT_TRUE(
        server.command({"REPLICAOF", "127.0.0.1", std::to_string(empty.port())}).is_status("OK"));
    ASSERT_TRUE(replication_reads(server, "master_link_status", "up"));
    ASSERT_TRUE(server.command({"REPLICAOF", "NO", "ONE"}).is_status("OK"));
    server.command({"CLIENT", "KILL", "TYPE", "normal"});
    ASSERT_TRUE(server.command({"GET", "failover:in-place"}).is_nil()) << "the sync kept the key";
    ASSERT_EQ(info_field(server.command({"INFO", "server"}).str, "run_id"), run_id);
  }

  ASSERT_TRUE(learns_restart_of(*contender, {0, 1, 2}));
  auto during = contender->lock("failover:in-place", {.ttl = 3s, .wait = 500ms});
  ASSERT_FALSE(during) << "two holders: the re-promoted members' grants counted";
  EXPECT_LT(Clock::now(), valid_until);
  const std::string message = during.error().message();
  EXPECT_NE(message.find("replication id changed"), std::string::npos) << message;
  EXPECT_NE(message.find(cluster()[0].url()), std::string::npos) << message;
}

}  // namespace
}  // namespace redlock

// Locking several keys as one against five real redis-server processes: all keys or
// none on each node, errors that name the key, its holder and the node, single-key
// locks and key sets excluding each other, and no deadlock between overlapping sets
// taken in opposite orders.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "support/lock_nodes_fixture.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;
using Keys = std::vector<std::string>;

class MultiLockTest : public test::LockNodesTest {};

TEST_F(MultiLockTest, EveryKeyIsSetOnEveryNodeAndReleasedTogether) {
  auto client = Client::create(options());
  const Keys keys{"a", "b", "c"};
  auto lock = client->lock_all(keys, {.ttl = 10s});
  ASSERT_TRUE(lock) << lock.error().message();
  EXPECT_EQ(lock->resources(), keys);
  EXPECT_GT(lock->validity(), 9s);
  std::this_thread::sleep_for(50ms);  // decided by a quorum; the last node is a moment behind
  for (std::size_t node = 0; node < 5; ++node) {
    for (const auto& key : keys) EXPECT_EQ(get(node, key), lock->value()) << key;
  }
  ASSERT_TRUE(lock->extend(60s));
  std::this_thread::sleep_for(50ms);
  for (std::size_t node = 0; node < 5; ++node) {
    for (const auto& key : keys) EXPECT_GT(cluster()[node].command({"PTTL", key}).integer, 50'000);
  }
  ASSERT_TRUE(lock->unlock());
  std::this_thread::sleep_for(50ms);
  for (std::size_t node = 0; node < 5; ++node)
    EXPECT_EQ(cluster()[node].command({"DBSIZE"}).integer, 0);
}

TEST_F(MultiLockTest, AllOrNothingAndTheErrorNamesKeyHolderAndNode) {
  auto client = Client::create(options());
  auto single = client->try_lock("b", 10s);
  ASSERT_TRUE(single);
  auto set = client->lock_all(Keys{"a", "b", "c"}, {.ttl = 10s});
  ASSERT_FALSE(set);
  EXPECT_EQ(set.error(), errc::conflict);
  EXPECT_THAT(set.error().message(), HasSubstr("lock of keys {\"a\", \"b\", \"c\"}"));
  EXPECT_THAT(set.error().message(), HasSubstr("key \"b\" held by " + single->value()));
  // Some node is named with the holder (node 0 may have timed out on a loaded machine).
  const auto& nodes = client->nodes();
  EXPECT_TRUE(std::any_of(nodes.begin(), nodes.end(), [&](const std::string& node) {
    return set.error().message().find(node + ": held by another") != std::string::npos;
  })) << set.error().message();
  std::this_thread::sleep_for(50ms);
  for (std::size_t node = 0; node < 5; ++node) {
    EXPECT_EQ(get(node, "a"), "(nil)") << "a partial hold was kept";
    EXPECT_EQ(get(node, "c"), "(nil)") << "a partial hold was kept";
  }
  // And the other way round: a held set keeps single-key locks of its keys out.
  ASSERT_TRUE(single->unlock());
  auto both = client->lock_all(Keys{"a", "b"}, {.ttl = 10s});
  ASSERT_TRUE(both);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(client->try_lock("a", 10s).code(), make_error_code(errc::conflict));
}

TEST_F(MultiLockTest, ExtendNeverRevivesAKeyThatIsGone) {
  auto client = Client::create(options());
  auto lock = client->lock_all(Keys{"a", "b"}, {.ttl = 10s});
  ASSERT_TRUE(lock);
  // Every node has applied the acquire (it returned at the quorum-th reply); only then is
  // "b" lost on a majority (as if it expired there): the set is not held any more.
  for (std::size_t node = 0; node < 5; ++node) {
    ASSERT_TRUE(eventually([&] { return get(node, "b") == lock->value(); })) << "node " << node;
  }
  for (std::size_t node = 0; node < 3; ++node) cluster()[node].command({"DEL", "b"});
  auto extended = lock->extend(60s);
  ASSERT_FALSE(extended);
  EXPECT_EQ(extended.error(), errc::not_held);
  for (std::size_t node = 0; node < 3; ++node) {
    EXPECT_EQ(get(node, "b"), "(nil)") << "revived";
    EXPECT_LT(cluster()[node].command({"PTTL", "a"}).integer, 10'001) << "extended without b";
  }
}

TEST_F(MultiLockTest, OverlappingSetsInOppositeOrdersNeverDeadlock) {
  // Two clients take {x, y, z} and {z, y, x} in a loop. Taking locks one by one in these
  // orders deadlocks as soon as each holds its first key; all-or-nothing per node with
  // the release of every failed attempt's leftovers keeps nothing while waiting.
  constexpr int rounds = 40;
  auto fast = options();
  fast.retry_delay = 5ms;
  fast.retry_jitter = 5ms;
  auto first = Client::create(fast);
  auto second = Client::create(fast);
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> failures{0};
  auto worker = [&](Client& client, Keys keys) {
    for (int i = 0; i < rounds; ++i) {
      auto lock = client.lock_all(keys, {.ttl = 5s, .wait = 10s});
      if (!lock) {
        ++failures;
        continue;
      }
      if (++inside > 1) ++overlaps;
      std::this_thread::sleep_for(1ms);
      --inside;
      (void)lock->unlock();
    }
  };
  const auto start = Clock::now();
  std::thread a(worker, std::ref(*first), Keys{"x", "y", "z"});
  std::thread b(worker, std::ref(*second), Keys{"z", "y", "x"});
  a.join();
  b.join();
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
  std::printf("%d + %d opposite-order key-set locks in %lld ms\n", rounds, rounds,
              static_cast<long long>(took.count()));
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(overlaps, 0);
  EXPECT_LT(took, 8s);
}

TEST_F(MultiLockTest, AKeyOfAnotherKindIsNamed) {
  auto client = Client::create(options());
  auto permit = client->acquire_permit("s", {.permits = 2, .lock = {.ttl = 10s}});
  ASSERT_TRUE(permit);
  auto set = client->lock_all(Keys{"a", "s"}, {.ttl = 10s});
  ASSERT_FALSE(set);
  EXPECT_EQ(set.error(), errc::wrong_kind);
  EXPECT_THAT(set.error().message(), HasSubstr("key \"s\": the key is a semaphore"));
  for (std::size_t node = 0; node < 5; ++node) EXPECT_EQ(get(node, "a"), "(nil)");
}

TEST_F(MultiLockTest, EachKeyOfAFencedSetHasItsOwnTokenOrderedWithSingleKeyHolders) {
  auto client = Client::create(options());
  auto first = client->lock_all(Keys{"a", "b"}, {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_FALSE(first->fencing_token()) << "a set has one token per key, not one for all";
  EXPECT_FALSE(first->fencing_token("c"));
  ASSERT_TRUE(first->fencing_token("a"));
  ASSERT_TRUE(first->fencing_token("b"));
  const auto first_a = *first->fencing_token("a");
  const auto first_b = *first->fencing_token("b");
  ASSERT_TRUE(first->unlock());

  // A holder of one key alone follows the set's token of that key, and the next set
  // follows it in turn; a key the single lock did not touch advances by the sets alone.
  auto single = client->lock("a", {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(single) << single.error().message();
  ASSERT_GT(*single->fencing_token(), first_a);
  EXPECT_EQ(single->fencing_token("a"), single->fencing_token());
  const auto single_a = *single->fencing_token();
  ASSERT_TRUE(single->unlock());
  auto second = client->lock_all(Keys{"b", "a", "c"}, {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_GT(*second->fencing_token("a"), single_a);
  EXPECT_GT(*second->fencing_token("b"), first_b);
  EXPECT_TRUE(second->fencing_token("c"));

  // Step 3 of the fencing design, per key: every granted node's counter reaches the token.
  std::this_thread::sleep_for(50ms);
  for (std::size_t node = 0; node < 5; ++node) {
    if (second->nodes()[node].status != NodeStatus::granted) continue;
    for (const auto& key : {"a", "b", "c"}) {
      const auto counter = std::stoull(get(node, std::string(key) + ":fence"));
      EXPECT_EQ(counter, *second->fencing_token(key)) << key << " on node " << node;
    }
  }
  ASSERT_TRUE(second->unlock());
}

TEST_F(MultiLockTest, BadInputIsAClearErrorAndSendsNothing) {
  auto client = Client::create(options());
  auto empty = client->lock_all(Keys{}, {.ttl = 10s});
  EXPECT_EQ(empty.error(), errc::invalid_argument);
  EXPECT_THAT(empty.error().message(), HasSubstr("the key list is empty"));
  auto twice = client->lock_all(Keys{"a", "b", "a"}, {.ttl = 10s});
  EXPECT_EQ(twice.error(), errc::invalid_argument);
  EXPECT_THAT(twice.error().message(), HasSubstr("\"a\" is given twice"));
  EXPECT_EQ(client->lock_all(Keys{"a", ""}, {.ttl = 10s}).error(), errc::invalid_argument);
  for (std::size_t i = 0; i < 5; ++i) EXPECT_EQ(cluster()[i].command({"DBSIZE"}).integer, 0);
}

}  // namespace
}  // namespace redlock

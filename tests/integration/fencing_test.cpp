// Fencing tokens: strictly increasing across holders, also after failed partial
// acquisitions inflated a minority of counters (the write-back step), and a storage
// that refuses a paused ex-holder's late write.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include <redlock/redlock.hpp>

#include "client/api/client_access.hpp"
#include "client/engine/seams.hpp"
#include "support/lock_nodes_fixture.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

class FencingTest : public test::LockNodesTest {
 protected:
  static Options options() { return LockNodesTest::options(std::chrono::milliseconds(200)); }

  static long long counter(std::size_t node, const std::string& key) {
    auto reply = cluster()[node].command({"GET", key + ":fence"});
    return reply.is_nil() ? 0 : std::stoll(reply.str);
  }

  // The scenario of the fencing design:
  //  1. A foreign value holds the key on nodes 2, 3, 4; five fenced attempts are granted
  //     only on nodes 0 and 1, fail, and leave those two counters at 5.
  //  2. Holder A takes the lock with nodes 3 and 4 stopped: its quorum {0, 1, 2}
  //     includes the inflated nodes, so its token is 6.
  //  3. Holder B takes it with nodes 0 and 1 stopped: its quorum is {2, 3, 4}.
  // Without the write-back, node 2's counter is still 1 after A, so B's token is 2 < 6.
  static std::pair<std::uint64_t, std::uint64_t> inflation_scenario(detail::Seams seams = {}) {
    const std::string key = "inventory:7";
    auto client = detail::ClientAccess::make(
        detail::Engine::create(options(), detail::make_redis_node, seams));
    for (std::size_t i : {2u, 3u, 4u}) cluster()[i].command({"SET", key, "foreign", "PX", "60000"});
    for (int i = 0; i < 5; ++i) {
      auto partial = client->lock(key, {.ttl = 10s, .fencing = true});
      EXPECT_EQ(partial.code(), make_error_code(errc::conflict));
    }
    // Each attempt was decided as soon as the three held nodes refused it; nodes 0 and 1
    // may still be applying the last one.
    for (int tries = 0; tries < 100 && (counter(0, key) < 5 || counter(1, key) < 5); ++tries) {
      std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(counter(0, key), 5);
    EXPECT_EQ(counter(1, key), 5);
    for (std::size_t i : {2u, 3u, 4u}) cluster()[i].command({"DEL", key});

    cluster()[3].pause();
    cluster()[4].pause();
    auto a = client->lock(key, {.ttl = 10s, .fencing = true});
    EXPECT_TRUE(a) << a.error().message();
    if (!a) return {0, 0};
    const auto token_a = a->fencing_token().value_or(0);
    cluster()[3].resume();
    cluster()[4].resume();
    // Let the stopped nodes apply what was queued for them before A releases.
    std::this_thread::sleep_for(200ms);
    EXPECT_TRUE(a->unlock());

    cluster()[0].pause();
    cluster()[1].pause();
    auto b = client->lock(key, {.ttl = 10s, .fencing = true});
    EXPECT_TRUE(b) << b.error().message();
    const auto token_b = b ? b->fencing_token().value_or(0) : 0;
    cluster()[0].resume();
    cluster()[1].resume();
    return {token_a, token_b};
  }

  // The same scenario for a key set: nodes 0 and 1 have "stock:b"'s counter at 5 (as a
  // minority of failed attempts would leave it); set A = {stock:a, stock:b} is taken with
  // nodes 3 and 4 stopped, so its token for stock:b is 6; then B locks stock:b alone with
  // nodes 0 and 1 stopped. Only A's per-key write-back to node 2 puts B above A.
  static std::pair<std::uint64_t, std::uint64_t> key_set_inflation_scenario(
      detail::Seams seams = {}) {
    auto client = detail::ClientAccess::make(
        detail::Engine::create(options(), detail::make_redis_node, seams));
    for (std::size_t i : {0u, 1u}) cluster()[i].command({"SET", "stock:b:fence", "5"});
    cluster()[3].pause();
    cluster()[4].pause();
    const std::vector<std::string> keys{"stock:a", "stock:b"};
    auto a = client->lock_all(keys, {.ttl = 10s, .fencing = true});
    EXPECT_TRUE(a) << a.error().message();
    const auto token_a = a ? a->fencing_token("stock:b").value_or(0) : 0;
    cluster()[3].resume();
    cluster()[4].resume();
    std::this_thread::sleep_for(200ms);
    if (a) {
      EXPECT_TRUE(a->unlock());
    }

    cluster()[0].pause();
    cluster()[1].pause();
    auto b = client->lock("stock:b", {.ttl = 10s, .fencing = true});
    EXPECT_TRUE(b) << b.error().message();
    const auto token_b = b ? b->fencing_token().value_or(0) : 0;
    cluster()[0].resume();
    cluster()[1].resume();
    return {token_a, token_b};
  }
};

TEST_F(FencingTest, ThousandSequentialHoldersFromThreeClientsGetStrictlyIncreasingTokens) {
  std::vector<std::shared_ptr<Client>> clients;
  for (int i = 0; i < 3; ++i) clients.push_back(Client::create(options()));
  std::uint64_t previous = 0;
  for (int i = 0; i < 1000; ++i) {
    auto lock =
        clients[static_cast<std::size_t>(i % 3)]->lock("ledger", {.ttl = 5s, .fencing = true});
    ASSERT_TRUE(lock) << lock.error().message();
    const auto token = lock->fencing_token();
    ASSERT_TRUE(token);
    ASSERT_GT(*token, previous) << "holder " << i;
    previous = *token;
    // The per-node outcomes carry the counters the nodes returned.
    std::uint64_t max_node_token = 0;
    for (const auto& node : lock->nodes()) {
      if (node.status == NodeStatus::granted) max_node_token = std::max(max_node_token, node.token);
    }
    EXPECT_EQ(max_node_token, *token);
    ASSERT_TRUE(lock->unlock());
  }
}

TEST_F(FencingTest, WriteBackKeepsTokensMonotonicAfterMinorityInflation) {
  auto [token_a, token_b] = inflation_scenario();
  EXPECT_EQ(token_a, 6u);
  EXPECT_GT(token_b, token_a);
}

TEST_F(FencingTest, WithoutTheWriteBackTheSameScenarioRegresses) {
  // Proof that the scenario above can fail: with step 3 skipped, B's token is smaller
  // than A's, which a fenced store would turn into B's writes being refused (or, with
  // the order reversed, a stale write accepted).
  auto [token_a, token_b] = inflation_scenario({.skip_fencing_write_back = true});
  EXPECT_EQ(token_a, 6u);
  EXPECT_LT(token_b, token_a);
}

TEST_F(FencingTest, AKeySetWritesEachKeysTokenBack) {
  auto [token_a, token_b] = key_set_inflation_scenario();
  EXPECT_EQ(token_a, 6u);
  EXPECT_GT(token_b, token_a);
}

TEST_F(FencingTest, WithoutTheKeySetsWriteBackTheScenarioRegresses) {
  auto [token_a, token_b] = key_set_inflation_scenario({.skip_fencing_write_back = true});
  EXPECT_EQ(token_a, 6u);
  EXPECT_LT(token_b, token_a);
}

TEST_F(FencingTest, PausedHoldersLateWriteIsRefused) {
  auto store = FencedStore::create(storage().url());
  auto first_client = Client::create(options());
  auto second_client = Client::create(options());
  auto first = first_client->lock("account:9", {.ttl = 500ms, .fencing = true});
  ASSERT_TRUE(first);
  const auto first_token = *first->fencing_token();
  auto first_write = store->write("account:9", first_token, "account:9:balance", "100");
  ASSERT_TRUE(first_write) << first_write.error().message();

  // A stop-the-world pause longer than the lock's validity.
  std::this_thread::sleep_for(700ms);
  ASSERT_EQ(first->validity(), 0ms);

  auto second = second_client->lock("account:9", {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(second) << second.error().message();
  ASSERT_GT(*second->fencing_token(), first_token);
  ASSERT_TRUE(store->write("account:9", *second->fencing_token(), "account:9:balance", "250"));

  // The first holder wakes up and writes what it computed before the pause.
  auto late = store->write("account:9", first_token, "account:9:balance", "90");
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error(), errc::stale_token);
  EXPECT_THAT(late.error().message(), HasSubstr("refused: token " + std::to_string(first_token)));
  EXPECT_EQ(store->read("account:9:balance")->value_or(""), "250");
  EXPECT_EQ(*store->highest_token("account:9"), *second->fencing_token());
  // Equal tokens are the same holder writing again: accepted.
  EXPECT_TRUE(store->write("account:9", *second->fencing_token(), "account:9:balance", "260"));
}

TEST_F(FencingTest, WithoutFencingALockCostsOneRoundTrip) {
  auto client = Client::create(options());
  auto calls = [&](std::initializer_list<const char*> names) {
    long long total = 0;
    for (std::size_t i = 0; i < 5; ++i) {
      auto info = cluster()[i].command({"INFO", "commandstats"}).str;
      for (const char* name : names) {
        auto at = info.find(name);
        if (at != std::string::npos) total += std::stoll(info.substr(at + std::strlen(name)));
      }
    }
    return total;
  };
  auto script_calls = [&] { return calls({"cmdstat_evalsha:calls=", "cmdstat_eval:calls="}); };
  ASSERT_TRUE(client->try_lock("warm-up", 10s));  // scripts loaded, connections up
  std::this_thread::sleep_for(50ms);
  auto before = script_calls();
  auto sets_before = calls({"cmdstat_set:calls="});
  auto plain = client->lock("order:1", {.ttl = 10s});
  ASSERT_TRUE(plain);
  std::this_thread::sleep_for(50ms);
  // Redis 7 takes SET with NX and GET, so an unfenced acquire needs no script.
  EXPECT_EQ(script_calls() - before, 0) << "no script without fencing";
  EXPECT_EQ(calls({"cmdstat_set:calls="}) - sets_before, 5) << "one SET NX GET per node";
  EXPECT_FALSE(plain->fencing_token());

  before = script_calls();
  auto fenced = client->lock("order:2", {.ttl = 10s, .fencing = true});
  ASSERT_TRUE(fenced);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(script_calls() - before, 10) << "acquire and write-back on each node";
}

}  // namespace
}  // namespace redlock

// Scripts without a local digest (SHA-1 unavailable to this process, as in a FIPS
// configuration) against five real redis-server processes: locks and semaphores work,
// and after a script's first use on a connection it goes out as EVALSHA with the digest
// the server gave, not as a full EVAL per call.

#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <chrono>
#include <iostream>
#include <string>
#include <thread>

#include <redlock/redlock.hpp>

#include "scripts/election_scripts.hpp"
#include "scripts/family_scripts.hpp"
#include "scripts/lock_scripts.hpp"
#include "support/lock_nodes_fixture.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;

class ScriptDigestTest : public test::LockNodesTest {
 protected:
  // Each script is made once per process, at its first use: made here while OpenSSL's
  // default properties ask for FIPS algorithms, which no provider loaded here offers, the
  // scripts get no SHA-1. The properties are restored at once: the lock values' random
  // bytes need the default provider too.
  static void SetUpTestSuite() {
    LockNodesTest::SetUpTestSuite();
    ASSERT_EQ(EVP_default_properties_enable_fips(nullptr, 1), 1);
    for (const auto* script : {&scripts::acquire(),
                               &scripts::release(),
                               &scripts::shard_release(),
                               &scripts::quiet_release(),
                               &scripts::extend(),
                               &scripts::fence(),
                               &scripts::inspect(),
                               &scripts::fenced_write(),
                               &scripts::proclaim(),
                               &scripts::leader_read(),
                               &scripts::semaphore_acquire(),
                               &scripts::semaphore_extend(),
                               &scripts::semaphore_release(),
                               &scripts::rw_acquire(),
                               &scripts::rw_extend(),
                               &scripts::rw_release(),
                               &scripts::rw_fence(),
                               &scripts::key_inspect(),
                               &scripts::multi_acquire(),
                               &scripts::multi_extend(),
                               &scripts::multi_release(),
                               &scripts::multi_fence()}) {
      (void)script;
    }
    EVP_default_properties_enable_fips(nullptr, 0);
  }

  /// Script calls served by the five nodes, once every node answered the last operation
  /// (operations return at their quorum-th reply).
  static long long settled_calls(std::string_view command) {
    long long last = -1;
    for (;;) {
      std::this_thread::sleep_for(100ms);
      const long long now = calls({command});
      if (now == last) return now;
      last = now;
    }
  }

  /// A lock with a fencing token (the acquire script, then the fence script), extended
  /// and released; a semaphore's permit, extended and released.
  static void cycle(Client& client, int i) {
    LockOptions fenced{.ttl = 10s};
    fenced.fencing = true;
    auto lock = client.lock("lock:" + std::to_string(i % 3), fenced);
    ASSERT_TRUE(lock) << lock.error().message();
    ASSERT_TRUE(lock->extend(10s));
    ASSERT_TRUE(lock->unlock());
    auto permit = client.acquire_permit("pool", {.permits = 2, .lock = {.ttl = 10s}});
    ASSERT_TRUE(permit) << permit.error().message();
    ASSERT_TRUE(permit->extend(10s));
    ASSERT_TRUE(permit->unlock());
  }
};

TEST_F(ScriptDigestTest, ScriptsGoOutAsEvalshaAfterTheirFirstUseOnAConnection) {
  ASSERT_EQ(scripts::acquire().sha1, "") << "the scripts were made with SHA-1 available";
  ASSERT_EQ(scripts::semaphore_acquire().sha1, "");
  auto client = Client::create(options());
  ASSERT_TRUE(client);
  // The first uses: EVAL on each connection, and the digests asked for.
  for (int i = 0; i < 3; ++i) {
    cycle(*client, i);
    if (HasFatalFailure()) return;
  }
  const long long eval_before = settled_calls("eval");
  const long long evalsha_before = settled_calls("evalsha");
  const long long loads_before = settled_calls("script|load");
  EXPECT_GT(loads_before, 0) << "the digests were asked of the servers";
  constexpr int cycles = 20;
  for (int i = 0; i < cycles; ++i) {
    cycle(*client, i);
    if (HasFatalFailure()) return;
  }
  const long long evals = settled_calls("eval") - eval_before;
  const long long evalshas = settled_calls("evalsha") - evalsha_before;
  const long long loads = settled_calls("script|load") - loads_before;
  std::cout << "first uses: " << eval_before << " EVAL, " << loads_before << " SCRIPT LOAD; over "
            << cycles << " cycles on 5 nodes: " << evals << " EVAL, " << evalshas << " EVALSHA, "
            << loads << " SCRIPT LOAD\n";
  EXPECT_EQ(evals, 0) << "scripts were sent in full after their first use";
  EXPECT_EQ(loads, 0) << "a digest was asked again";
  // Per cycle and node at least: acquire, fence, extend and release of the lock; acquire,
  // extend and release of the permit.
  EXPECT_GE(evalshas, cycles * 5 * 7);
}

}  // namespace
}  // namespace redlock

// Members that lose their keys (Options::member_guard), on five real nodes: a member
// restarted while a lock is held (with or without persistence), an extend that only a
// restarted member's grants would carry, a young member met for the first time, and a
// ttl longer than the fleet's declared longest.

#include <gtest/gtest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "member_guard_fixture.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using test::MemberGuardTest;

// Three of five members restart without their data while a lock is held: a contender
// that met them before must not get the lock on their grants while the holder's lock
// lasts; it gets it once the guard (the fleet's longest ttl) has passed.
TEST_F(MemberGuardTest, ARestartWithoutPersistenceWhileALockIsHeldKeepsOthersOut) {
  auto holder = Client::create(guarded(3s));
  auto contender = Client::create(guarded(3s));
  meet(*contender);
  auto lock = holder->try_lock("guard:held", 3s);
  ASSERT_TRUE(lock) << lock.error().message();
  const auto valid_until = Clock::now() + lock->validity();
  restart({0, 1, 2});
  ASSERT_TRUE(cluster()[0].command({"GET", "guard:held"}).is_nil()) << "the restart kept the key";
  ASSERT_TRUE(learns_restart_of(*contender, {0, 1, 2}));
  auto during = contender->lock("guard:held", {.ttl = 3s, .wait = 500ms});
  ASSERT_FALSE(during) << "two holders: the restarted members' grants counted";
  EXPECT_LT(Clock::now(), valid_until);
  EXPECT_NE(during.error().message().find("guarded for another"), std::string::npos)
      << during.error().message();
  EXPECT_NE(during.error().message().find(cluster()[0].url()), std::string::npos)
      << during.error().message();
  EXPECT_NE(during.error().message().find("run_id changed"), std::string::npos)
      << during.error().message();
  auto after = contender->lock("guard:held", {.ttl = 3s, .wait = 5s});
  ASSERT_TRUE(after) << after.error().message();
  EXPECT_GE(Clock::now(), valid_until) << "handed out while the first holder was valid";
}

// A member in its guard period is reported where an operator looks, not only in the
// error of a lock that fails: a `guarded` node event with its length, a warning in the
// log, and Client::inspect() (so `redlock status`) while it lasts.
TEST_F(MemberGuardTest, AGuardIsReportedToTheObserverTheLogAndInspect) {
  struct Guards : Observer {
    std::mutex mutex;
    std::vector<std::pair<std::string, std::chrono::milliseconds>> seen;
    void on_node(const NodeEvent& event) override {
      if (event.kind != NodeEventKind::guarded) return;
      std::lock_guard<std::mutex> hold(mutex);
      seen.emplace_back(std::string(event.node) + ": " + std::string(event.detail),
                        event.guarded_for);
    }
  };
  auto guards = std::make_shared<Guards>();
  auto lines = std::make_shared<std::vector<std::string>>();
  auto lines_mutex = std::make_shared<std::mutex>();
  auto opts = guarded(3s);
  opts.observer = guards;
  opts.log = [lines, lines_mutex](LogLevel level, std::string_view line) {
    std::lock_guard<std::mutex> hold(*lines_mutex);
    if (level == LogLevel::warning) lines->emplace_back(line);
  };
  auto client = Client::create(opts);
  meet(*client);
  {
    std::lock_guard<std::mutex> hold(guards->mutex);
    ASSERT_TRUE(guards->seen.empty()) << "a first contact without the young rule is not guarded";
  }
  restart({3});
  meet(*client);  // the reconnect to node 3 learns that it restarted
  ASSERT_TRUE(eventually(
      [&] {
        std::lock_guard<std::mutex> hold(guards->mutex);
        return !guards->seen.empty();
      },
      10s));
  {
    std::lock_guard<std::mutex> hold(guards->mutex);
    ASSERT_EQ(guards->seen.size(), 1u);
    EXPECT_NE(guards->seen[0].first.find(cluster()[3].url()), std::string::npos);
    EXPECT_NE(guards->seen[0].first.find("run_id changed"), std::string::npos);
    // From the reconnect: what is left when INFO answered, never more than the bound.
    EXPECT_GT(guards->seen[0].second, 0ms);
    EXPECT_LE(guards->seen[0].second, 3s);
  }
  {
    std::lock_guard<std::mutex> hold(*lines_mutex);
    bool logged = false;
    for (const auto& line : *lines) logged |= line.find("does not count for") != std::string::npos;
    EXPECT_TRUE(logged) << ::testing::PrintToString(*lines);
  }
  auto views = client->inspect("guard:any");
  ASSERT_TRUE(views) << views.error().message();
  for (std::size_t node = 0; node < 5; ++node) {
    if (node == 3) {
      EXPECT_NE((*views)[node].guard.find("guarded for another"), std::string::npos);
    } else {
      EXPECT_EQ((*views)[node].guard, "") << "node " << node;
    }
  }
  std::this_thread::sleep_for(3s);
  auto later = client->inspect("guard:any");
  ASSERT_TRUE(later) << later.error().message();
  EXPECT_EQ((*later)[3].guard, "") << "still reported after the guard ended";
}

// With persistence the keys survive, and the restarted members' refusals count: the
// contender meets a conflict, not an unreachable quorum. Their grants still do not count
// (the client cannot see how the server persists), so a free key is refused until the
// guard ends.
TEST_F(MemberGuardTest, ARestartWithPersistenceKeepsRefusalsCountingAndGrantsGuarded) {
  std::vector<std::unique_ptr<test::RedisServer>> durable;
  auto opts = guarded(5s);
  for (std::size_t node = 0; node < 3; ++node) {
    durable.push_back(
        std::make_unique<test::RedisServer>(test::RedisServerOptions{.appendonly_always = true}));
    opts.nodes[node] = durable.back()->url();
  }
  auto holder = Client::create(opts);
  auto contender = Client::create(opts);
  meet(*contender);
  auto lock = holder->try_lock("guard:durable", 5s);
  ASSERT_TRUE(lock) << lock.error().message();
  for (auto& server : durable) {
    for (int i = 0; i < 100 && server->command({"GET", "guard:durable"}).is_nil(); ++i) {
      std::this_thread::sleep_for(10ms);
    }
    server->kill9();
    server->restart();
    ASSERT_FALSE(server->command({"GET", "guard:durable"}).is_nil()) << "the AOF lost the key";
  }
  ASSERT_TRUE(learns_restart_of(*contender, {0, 1, 2}));
  auto held = contender->lock("guard:durable", {.ttl = 1500ms, .wait = 300ms});
  ASSERT_FALSE(held);
  EXPECT_EQ(held.error().code(), make_error_code(errc::conflict)) << held.error().message();
  auto free_key = contender->try_lock("guard:free", 1500ms);
  ASSERT_FALSE(free_key) << "a restarted member's grant counted";
  EXPECT_EQ(free_key.error().code(), make_error_code(errc::quorum_unreachable))
      << free_key.error().message();
  EXPECT_NE(free_key.error().message().find("guarded for another"), std::string::npos)
      << free_key.error().message();
}

// An extend follows the grant's rule: a restarted member's success does not count. The
// holder's value is put back on the three restarted members (as a late write could) and
// the two others are paused: only the guarded members would say yes.
TEST_F(MemberGuardTest, AnExtendCarriedOnlyByRestartedMembersFails) {
  auto holder = Client::create(guarded(2s));
  meet(*holder);
  auto lock = holder->try_lock("guard:extend", 2s);
  ASSERT_TRUE(lock) << lock.error().message();
  restart({0, 1, 2});
  for (std::size_t node = 0; node < 3; ++node) {
    cluster()[node].command({"SET", "guard:extend", lock->value(), "PX", "2000"});
  }
  ASSERT_TRUE(learns_restart_of(*holder, {0, 1, 2}));
  cluster()[3].pause();
  cluster()[4].pause();
  auto extended = lock->extend(2s);
  cluster()[3].resume();
  cluster()[4].resume();
  ASSERT_FALSE(extended) << "extended on the grants of members that lost their keys";
  EXPECT_NE(extended.error().message().find("guarded for another"), std::string::npos)
      << extended.error().message();
}

// A member met for the first time that has been up for less than the bound may have lost
// keys: with the opt-in rule its grants do not count; without it (the default) a freshly
// started fleet serves locks at once.
TEST_F(MemberGuardTest, AYoungMemberOnFirstContactIsGuardedOnlyWhenAskedFor) {
  auto opts = guarded(1h);
  opts.member_guard.young_on_first_contact = true;
  auto cautious = Client::create(opts);
  auto refused = cautious->try_lock("guard:young", 1s);
  ASSERT_FALSE(refused) << "a young member's grant counted on first contact";
  EXPECT_EQ(refused.error().code(), make_error_code(errc::quorum_unreachable));
  EXPECT_NE(refused.error().message().find("when first met"), std::string::npos)
      << refused.error().message();

  // Another key: the refused attempt's clean-up is ordered only behind the cautious
  // client's own later commands (docs/errors.md), not another client's.
  auto trusting = Client::create(guarded(1h));
  auto granted = trusting->try_lock("guard:young-trusted", 1s);
  EXPECT_TRUE(granted) << granted.error().message();
}

// A ttl beyond the fleet's declared longest cannot be guarded for: rejected, naming both.
TEST_F(MemberGuardTest, ATtlBeyondTheDeclaredLongestIsRejectedNamingBoth) {
  auto client = Client::create(guarded(10s));
  auto lock = client->try_lock("guard:long", 11s);
  ASSERT_FALSE(lock);
  EXPECT_EQ(lock.error().code(), make_error_code(errc::invalid_argument));
  EXPECT_NE(lock.error().message().find("11000 ms"), std::string::npos) << lock.error().message();
  EXPECT_NE(lock.error().message().find("longest_ttl (10000 ms)"), std::string::npos)
      << lock.error().message();
  auto fits = client->try_lock("guard:long", 10s);
  ASSERT_TRUE(fits) << fits.error().message();
  auto extended = fits->extend(11s);
  ASSERT_FALSE(extended);
  EXPECT_EQ(extended.error().code(), make_error_code(errc::invalid_argument));
}

// Five URLs naming four servers, node 0 twice (as 127.0.0.1 and as localhost): that
// server must not vote twice. An acquire cannot show it (whichever of the two URLs comes
// second finds the key set by the first), an owner-checked extend can: with two of the
// other servers stopped, node 0 and node 1 are two votes of five, not a quorum. The
// duplicate is named in the error and told once to the observer.
TEST_F(MemberGuardTest, TwoUrlsNamingOneServerGiveItOneVote) {
  struct Told : Observer {
    std::mutex mutex;
    std::vector<std::string> seen;
    void on_node(const NodeEvent& event) override {
      if (event.kind != NodeEventKind::misconfigured) return;
      std::lock_guard<std::mutex> hold(mutex);
      seen.emplace_back(std::string(event.node) + ": " + std::string(event.detail));
    }
  };
  auto told = std::make_shared<Told>();
  auto opts = guarded(3s);
  const auto same = "redis://localhost:" + std::to_string(cluster()[0].port());
  opts.nodes = {cluster()[0].url(), same, cluster()[1].url(), cluster()[2].url(),
                cluster()[3].url()};
  opts.observer = told;
  auto client = Client::create(opts);
  auto lock = client->try_lock("guard:twice", 3s);
  ASSERT_TRUE(lock) << lock.error().message();
  cluster()[2].kill9();
  cluster()[3].kill9();
  auto extended = lock->extend(3s);
  ASSERT_FALSE(extended) << "one server voted twice";
  EXPECT_NE(extended.error().message().find("the same server as"), std::string::npos)
      << extended.error().message();
  std::lock_guard<std::mutex> hold(told->mutex);
  ASSERT_EQ(told->seen.size(), 1u) << ::testing::PrintToString(told->seen);
  const bool names_both = told->seen[0].find(same) != std::string::npos &&
                          told->seen[0].find(cluster()[0].url()) != std::string::npos;
  EXPECT_TRUE(names_both) << told->seen[0];
}

}  // namespace
}  // namespace redlock

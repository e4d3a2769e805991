// Leader election against five real redis-server processes: one of two candidates leads,
// terms increase across resignations and crashes, a resignation wakes the next candidate,
// leader() and observe() report who leads, and a leader that loses its quorum is told
// before its validity ends.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "support/lock_nodes_fixture.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class ElectionTest : public test::LockNodesTest {};

TEST_F(ElectionTest, OneOfTwoCandidatesLeadsAndEveryoneReadsWho) {
  auto a = Client::create(options());
  auto b = Client::create(options());
  Election first(a, "scheduler", "host-a:1", 10s);
  Election second(b, "scheduler", "host-b:2", 10s);

  auto leading = first.campaign();
  ASSERT_TRUE(leading) << leading.error().message();
  EXPECT_EQ(leading->identity(), "host-a:1");
  EXPECT_GT(leading->term(), 0u);
  EXPECT_GT(leading->validity(), 9s);
  EXPECT_FALSE(leading->stop_token().stop_requested());

  auto refused = second.campaign({}, 200ms);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), errc::conflict) << refused.error().message();

  for (Election* reader : {&first, &second}) {
    auto seen = reader->leader();
    ASSERT_TRUE(seen) << seen.error().message();
    ASSERT_TRUE(*seen);
    EXPECT_EQ((*seen)->identity, "host-a:1");
    EXPECT_EQ((*seen)->term, leading->term());
    EXPECT_EQ((*seen)->value, leading->lock().value());
    EXPECT_GT((*seen)->validity, 9s);
    EXPECT_LE((*seen)->validity, 10s);
  }
  // The record sits beside the key on the members, with the value, term and identity
  // (on every member once the last one answered: the campaign returned at a quorum).
  const std::string record =
      leading->lock().value() + " " + std::to_string(leading->term()) + " host-a:1";
  for (std::size_t node = 0; node < 5; ++node) {
    EXPECT_TRUE(eventually([&] { return get(node, "scheduler:leader") == record; }))
        << "node " << node << ": " << get(node, "scheduler:leader");
  }

  ASSERT_TRUE(leading->resign());
  EXPECT_TRUE(leading->stop_token().stop_requested());
  auto after = second.leader();
  ASSERT_TRUE(after) << after.error().message();
  EXPECT_FALSE(*after) << "a resigned leader is still reported";
}

TEST_F(ElectionTest, NobodyLeadsAFreshKey) {
  auto client = Client::create(options());
  Election election(client, "fresh", "me", 5s);
  auto seen = election.leader();
  ASSERT_TRUE(seen) << seen.error().message();
  EXPECT_FALSE(*seen);
}

// The other candidate's client polls no sooner than every 4 s (slow_polling): taking the
// seat sooner after a resignation means the release announcement woke it.
TEST_F(ElectionTest, AResignationWakesTheWaitingCandidateAtOnce) {
  auto a = Client::create(options());
  auto b = Client::create(slow_polling());
  Election first(a, "wake", "first", 10s);
  Election second(b, "wake", "second", 10s);
  std::vector<double> handoffs_ms;
  auto first_win = first.campaign();
  ASSERT_TRUE(first_win) << first_win.error().message();
  std::optional<Leadership> leading(std::move(*first_win));
  std::uint64_t last_term = leading->term();
  for (int round = 0; round < 5; ++round) {
    Election& next = round % 2 == 0 ? second : first;
    std::atomic<Clock::time_point> won{};
    std::optional<Result<Leadership>> taken;
    std::thread waiter([&] {
      taken.emplace(next.campaign({}, 8s));
      won = Clock::now();
    });
    std::this_thread::sleep_for(300ms);  // the waiter's first attempt is refused by then
    const auto resigned = Clock::now();
    ASSERT_TRUE(leading->resign());
    waiter.join();
    ASSERT_TRUE(*taken) << taken->error().message();
    const double ms = std::chrono::duration<double, std::milli>(won.load() - resigned).count();
    handoffs_ms.push_back(ms);
    EXPECT_LT(ms, 3000) << "the next candidate was not woken by the resignation";
    EXPECT_GT((*taken)->term(), last_term);
    last_term = (*taken)->term();
    leading.emplace(std::move(**taken));
    EXPECT_EQ(leading->identity(), round % 2 == 0 ? "second" : "first");
  }
  std::printf("[ measured ] resign -> next leader (ms):");
  for (double ms : handoffs_ms) std::printf(" %.1f", ms);
  std::printf("\n");
}

TEST_F(ElectionTest, AnAsynchronousCampaignLeadsAndReportsOnTheLoopThread) {
  auto a = Client::create(options());
  auto b = Client::create(options());
  Election first(a, "async", "first", 5s);
  Election second(b, "async", "second", 5s);
  auto held = first.campaign();
  ASSERT_TRUE(held) << held.error().message();
  std::promise<Result<Leadership>> outcome;
  second.campaign_async({}, 5s, [&](Result<Leadership> won) { outcome.set_value(std::move(won)); });
  auto future = outcome.get_future();
  EXPECT_EQ(future.wait_for(300ms), std::future_status::timeout) << "led while another did";
  ASSERT_TRUE(held->resign());
  ASSERT_EQ(future.wait_for(5s), std::future_status::ready);
  auto won = future.get();
  ASSERT_TRUE(won) << won.error().message();
  EXPECT_GT(won->term(), held->term());
  EXPECT_EQ(won->identity(), "second");
  auto seen = first.leader();
  ASSERT_TRUE(seen && *seen);
  EXPECT_EQ((*seen)->identity, "second");

  // Stopped while waiting: errc::cancelled, nothing won.
  std::stop_source stop;
  std::promise<Result<Leadership>> stopped;
  first.campaign_async(stop.get_token(), 5s,
                       [&](Result<Leadership> won) { stopped.set_value(std::move(won)); });
  std::this_thread::sleep_for(100ms);
  stop.request_stop();
  auto cancelled = stopped.get_future();
  ASSERT_EQ(cancelled.wait_for(2s), std::future_status::ready);
  auto result = cancelled.get();
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error(), errc::cancelled) << result.error().message();
}

// A crashed leader never resigns: the next one takes the seat once its TTL ran out, with
// a greater term.
TEST_F(ElectionTest, TermsIncreaseAcrossACrashedLeader) {
  auto survivor = Client::create(options());
  Election waiting(survivor, "crash", "survivor", 1s);
  std::uint64_t crashed_term = 0;
  {
    auto doomed = Client::create(options());
    Election election(doomed, "crash", "doomed", 1s);
    auto leading = election.campaign();
    ASSERT_TRUE(leading) << leading.error().message();
    crashed_term = leading->term();
    // The client stops without releasing (its watchdog stops, the key stays until its
    // TTL), as a killed process would leave it.
    doomed->close();
  }
  const auto start = Clock::now();
  auto next = waiting.campaign({}, 5s);
  ASSERT_TRUE(next) << next.error().message();
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  std::printf("[ measured ] crashed leader (ttl 1000 ms) -> next leader: %.1f ms\n", ms);
  EXPECT_GT(next->term(), crashed_term);
  auto seen = waiting.leader();
  ASSERT_TRUE(seen && *seen);
  EXPECT_EQ((*seen)->identity, "survivor");
  EXPECT_EQ((*seen)->term, next->term());
}

TEST_F(ElectionTest, ObserveReportsEveryLeaderInTermOrder) {
  auto watcher = Client::create(options());
  auto a = Client::create(options());
  auto b = Client::create(options());
  Election observer(watcher, "observed", "observer", 3s);
  Election first(a, "observed", "first", 3s);
  Election second(b, "observed", "second", 3s);

  std::mutex mutex;
  std::vector<std::optional<Leader>> reports;
  std::stop_source stop;
  std::thread watching([&] {
    auto ended = observer.observe(
        stop.get_token(),
        [&](const std::optional<Leader>& leader) {
          std::lock_guard<std::mutex> hold(mutex);
          reports.push_back(leader);
        },
        20ms);
    EXPECT_TRUE(ended) << ended.error().message();
  });
  auto reported = [&](std::size_t n) {
    return eventually(
        [&] {
          std::lock_guard<std::mutex> hold(mutex);
          return reports.size() >= n;
        },
        3s);
  };
  ASSERT_TRUE(reported(1));  // the first read: nobody
  std::vector<std::uint64_t> terms;
  for (Election* candidate : {&first, &second, &first}) {
    // Counted before the campaign: the observer may report its leader before it returns.
    const auto before = [&] {
      std::lock_guard<std::mutex> hold(mutex);
      return reports.size();
    }();
    auto leading = candidate->campaign({}, 2s);
    ASSERT_TRUE(leading) << leading.error().message();
    terms.push_back(leading->term());
    ASSERT_TRUE(reported(before + 1));
    ASSERT_TRUE(leading->resign());
    ASSERT_TRUE(reported(before + 2));
  }
  stop.request_stop();
  watching.join();

  std::lock_guard<std::mutex> hold(mutex);
  ASSERT_EQ(reports.size(), 7u);
  EXPECT_FALSE(reports[0]);
  std::uint64_t highest = 0;
  const char* identities[] = {"first", "second", "first"};
  for (std::size_t i = 0; i < 3; ++i) {
    const auto& leader = reports[1 + 2 * i];
    ASSERT_TRUE(leader) << "report " << 1 + 2 * i;
    EXPECT_EQ(leader->identity, identities[i]);
    EXPECT_EQ(leader->term, terms[i]);
    EXPECT_GT(leader->term, highest);
    highest = leader->term;
    EXPECT_FALSE(reports[2 + 2 * i]) << "the seat empties after a resignation";
  }
}

// An observer that reads only every 10 s on its own still sees a campaign into an empty
// seat, a resignation and the successor at once: the announcements wake it (the new
// leader's, and the release), and its follow-up reads after a release find the next leader.
TEST_F(ElectionTest, ObserveIsWokenByCampaignsAndResignations) {
  auto watcher = Client::create(options());
  auto a = Client::create(options());
  auto b = Client::create(options());
  Election observer(watcher, "woken", "observer", 30s);
  Election first(a, "woken", "first", 10s);
  Election second(b, "woken", "second", 10s);

  std::mutex mutex;
  std::vector<std::pair<Clock::time_point, std::optional<Leader>>> reports;
  std::stop_source stop;
  std::thread watching([&] {
    (void)observer.observe(
        stop.get_token(),
        [&](const std::optional<Leader>& leader) {
          std::lock_guard<std::mutex> hold(mutex);
          reports.emplace_back(Clock::now(), leader);
        },
        10s);
  });
  // Joined however the test ends.
  struct Joiner {
    std::stop_source& stop;
    std::thread& thread;
    ~Joiner() {
      stop.request_stop();
      if (thread.joinable()) thread.join();
    }
  } joiner{stop, watching};
  // The first report that satisfies `wanted`, with when it came.
  auto first_report = [&](const std::function<bool(const std::optional<Leader>&)>& wanted,
                          std::size_t from) -> std::optional<Clock::time_point> {
    std::optional<Clock::time_point> at;
    eventually(
        [&] {
          std::lock_guard<std::mutex> hold(mutex);
          for (std::size_t i = from; i < reports.size(); ++i) {
            if (wanted(reports[i].second)) {
              at = reports[i].first;
              return true;
            }
          }
          return false;
        },
        3s);
    return at;
  };
  auto count = [&] {
    std::lock_guard<std::mutex> hold(mutex);
    return reports.size();
  };
  ASSERT_TRUE(first_report([](const auto& leader) { return !leader; }, 0));
  // The observer subscribes on the loop thread after its first read: give it a moment.
  std::this_thread::sleep_for(200ms);
  const auto campaigned = Clock::now();
  auto leading = first.campaign();
  ASSERT_TRUE(leading) << leading.error().message();
  const auto first_seen =
      first_report([](const auto& leader) { return leader && leader->identity == "first"; }, 1);
  ASSERT_TRUE(first_seen) << "the campaign into an empty seat was not seen";
  std::optional<Result<Leadership>> next;
  std::thread waiter([&] { next.emplace(second.campaign({}, 5s)); });
  std::this_thread::sleep_for(300ms);
  const auto resigned = Clock::now();
  ASSERT_TRUE(leading->resign());
  waiter.join();
  ASSERT_TRUE(*next) << next->error().message();
  // Between the two the seat may be seen empty for a moment (and reported so).
  const auto successor_seen =
      first_report([](const auto& leader) { return leader && leader->identity == "second"; }, 1);
  ASSERT_TRUE(successor_seen) << "the successor was not seen";
  const auto before = count();
  const auto resigned_again = Clock::now();
  ASSERT_TRUE((*next)->resign());
  const auto empty_seen = first_report([](const auto& leader) { return !leader; }, before);
  ASSERT_TRUE(empty_seen) << "the empty seat was not seen";
  auto ms = [](Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  std::printf(
      "[ measured ] observer (reads every 10 s): a leader in an empty seat seen %.1f ms "
      "after its campaign began, the successor %.1f ms after a resignation, the empty "
      "seat %.1f ms after one\n",
      ms(*first_seen - campaigned), ms(*successor_seen - resigned),
      ms(*empty_seen - resigned_again));
}

// Three of five members paused past the TTL: the watchdog cannot keep a quorum, and the
// leadership's stop token is requested while its validity is still left.
TEST_F(ElectionTest, ALeaderThatLosesItsQuorumIsStoppedBeforeItsValidityEnds) {
  auto client = Client::create(options());
  Election election(client, "lost", "fragile", 1500ms);
  auto leading = election.campaign();
  ASSERT_TRUE(leading) << leading.error().message();
  std::atomic<bool> stopped{false};
  std::atomic<Clock::time_point> stopped_at{};
  std::atomic<Clock::time_point> valid_until{};
  const Lock* lock = &leading->lock();
  std::stop_callback on_stop(leading->stop_token(), [&] {
    stopped_at = Clock::now();
    valid_until = lock->valid_until();
    stopped = true;
  });
  for (std::size_t node = 0; node < 3; ++node) cluster()[node].pause();
  ASSERT_TRUE(eventually([&] { return stopped.load(); }, 4s)) << "never told of the loss";
  for (std::size_t node = 0; node < 3; ++node) cluster()[node].resume();
  EXPECT_TRUE(leading->lost());
  const double left_ms =
      std::chrono::duration<double, std::milli>(valid_until.load() - stopped_at.load()).count();
  std::printf("[ measured ] stop requested with %.1f ms of validity left (ttl 1500 ms)\n", left_ms);
  EXPECT_GT(left_ms, 0.0);
}

}  // namespace
}  // namespace redlock

// Randomized API sequences against five real nodes under process faults. Worker threads
// draw random programs of lock operations (sync and async, with and without the watchdog,
// extends to shorter and longer TTLs, unlocks twice and after expiry) while a fault thread
// pauses nodes and a closer thread closes the workers' clients under them. A sampler judges
// the promise every holder relies on: at any instant, validity() of a live lock never
// exceeds what a quorum of nodes still holds for it (their PTTL of our value). Every
// holder's claims of exclusive use are checked for overlaps at the end.
//
// Seeded: REDLOCK_API_SEED=N replays a run (the seed is printed first), and
// REDLOCK_API_SECONDS sets its length (default 6).

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <future>
#include <iostream>
#include <map>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include <redlock/redlock.hpp>

#include "support/lock_nodes_fixture.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::uint64_t env_or(const char* name, std::uint64_t fallback) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::strtoull(text, nullptr, 10) : fallback;
}

long long ms_since(Clock::time_point origin, Clock::time_point when) {
  return std::chrono::duration_cast<milliseconds>(when - origin).count();
}

/// A lock some worker holds, shared with the sampler. The worker holds `mutex` around every
/// call on the lock, so a sample never straddles an unlock or a manual extend.
struct LiveLock {
  std::mutex mutex;
  std::string key;
  Lock lock;
  std::string history;  // what the worker did with it, for a finding's message
};

/// An interval in which a holder acted as the owner: from the moment it checked
/// validity() until the end of that validity or its unlock, whichever came first.
struct Claim {
  std::string key;
  std::string holder;
  Clock::time_point start;
  Clock::time_point end;
};

class ApiSequenceTest : public test::LockNodesTest {
 protected:
  // Every node's keyspace events for the test's keys (set, pexpire, del, expired), kept
  // with the time they were seen, so that a finding can say what happened to the value.
  void watch_keyspace(std::atomic<bool>& running, std::vector<std::thread>& threads) {
    for (std::size_t i = 0; i < cluster().size(); ++i) {
      cluster()[i].command({"CONFIG", "SET", "notify-keyspace-events", "Kg$x"});
      threads.emplace_back([this, i, &running] {
        redisContext* context = redisConnect("127.0.0.1", cluster()[i].plain_port());
        if (context == nullptr || context->err) return;
        redisReply* reply =
            static_cast<redisReply*>(redisCommand(context, "PSUBSCRIBE __keyspace@0__:api:*"));
        if (reply != nullptr) freeReplyObject(reply);
        while (running) {
          void* raw = nullptr;
          // Blocking: the test ends each watcher with an event of its own (stop_watchers).
          if (redisGetReply(context, &raw) != REDIS_OK) break;
          auto* event = static_cast<redisReply*>(raw);
          if (event->type == REDIS_REPLY_ARRAY && event->elements == 4) {
            std::lock_guard guard(findings_mutex_);
            keyspace_.push_back("+" + std::to_string(ms_since(origin_, Clock::now())) + " node" +
                                std::to_string(i) + " " +
                                std::string(event->element[2]->str, event->element[2]->len) + " " +
                                std::string(event->element[3]->str, event->element[3]->len));
          }
          freeReplyObject(event);
        }
        redisFree(context);
      });
    }
  }

  void violation(std::string text) {
    std::lock_guard guard(findings_mutex_);
    if (violations_.size() < 20) violations_.push_back(std::move(text));
    ++violation_count_;
  }

  std::shared_ptr<Client> client_of(std::size_t worker) {
    std::lock_guard guard(clients_mutex_);
    auto& client = clients_[worker];
    if (!client) client = Client::create(options(40ms));
    return client;
  }

  void replace_client(std::size_t worker, const std::shared_ptr<Client>& closed) {
    std::lock_guard guard(clients_mutex_);
    if (clients_[worker] == closed) clients_[worker] = nullptr;
  }

  void close_random_client(std::mt19937_64& random) {
    std::shared_ptr<Client> victim;
    {
      std::lock_guard guard(clients_mutex_);
      victim = clients_[random() % clients_.size()];
    }
    if (victim) victim->close();
  }

  void publish(const std::shared_ptr<LiveLock>& live) {
    std::lock_guard guard(live_mutex_);
    live_.push_back(live);
  }

  void retire(const std::shared_ptr<LiveLock>& live) {
    std::lock_guard guard(live_mutex_);
    live_.erase(std::remove(live_.begin(), live_.end(), live), live_.end());
  }

  void claim(const LiveLock& live, Clock::time_point until_unlock) {
    const auto now = Clock::now();
    const auto validity = live.lock.validity();
    if (validity <= 0ms) return;
    std::lock_guard guard(findings_mutex_);
    claims_.push_back({live.key, live.lock.value(), now, std::min(now + validity, until_unlock)});
  }

  // One sample of one lock: validity() first, then every reachable node's view of our
  // value. A node that holds our value at time t with PTTL p held it for validity v read at
  // t0 <= t iff p + (t - t0) >= v. Paused nodes cannot be asked and count as holding.
  void sample(LiveLock& live) {
    std::lock_guard guard(live.mutex);
    if (!live.lock.owned()) return;
    const auto read_at = Clock::now();
    const auto validity = live.lock.validity();
    if (validity <= 2ms) return;
    int holding = 0;
    std::ostringstream views;
    for (std::size_t i = 0; i < cluster().size(); ++i) {
      if (paused_[i]) {
        ++holding;
        views << " node" << i << "=paused";
        continue;
      }
      auto reply = cluster()[i].command(
          {"EVAL", "return {redis.call('GET', KEYS[1]) or '', redis.call('PTTL', KEYS[1])}", "1",
           live.key});
      const auto asked_at = Clock::now();
      if (reply.elements.size() != 2) continue;
      const bool ours = reply.elements[0].str == live.lock.value();
      const auto pttl = milliseconds(reply.elements[1].integer);
      const auto elapsed = std::chrono::duration_cast<milliseconds>(asked_at - read_at);
      views << " node" << i << "=" << (ours ? "ours" : "other") << "/" << pttl.count() << "ms"
            << " after " << elapsed.count() << "ms";
      // 2 ms: PTTL and validity() are both truncated to whole milliseconds. A node asked
      // only after the validity read had run out (this thread was descheduled) can no
      // longer show anything about it: its key may have expired in its own good time.
      if ((ours && pttl + elapsed + 2ms >= validity) || elapsed + 2ms >= validity) ++holding;
    }
    if (holding < 3) {
      violation("validity() " + std::to_string(validity.count()) + " ms of " + live.key +
                " (value " + live.lock.value() + ", " + live.history +
                ") exceeds what a quorum holds:" + views.str());
    }
    ++samples_;
  }

  // The holder gives the lock up (unlock, sync or async, confirmed or not): its claims end
  // there, whatever validity was left.
  void gave_up(const LiveLock& live) {
    std::lock_guard guard(findings_mutex_);
    given_up_.try_emplace(live.lock.value(), Clock::now());
  }

  // An extend may shorten the lock: the holder's earlier claims end where its validity
  // now ends, as if it had given up the rest.
  void shortened(const LiveLock& live) {
    const auto now = Clock::now();
    const auto until = now + live.lock.validity();
    std::lock_guard guard(findings_mutex_);
    for (auto& c : claims_) {
      if (c.holder == live.lock.value()) c.end = std::min(c.end, std::max(until, c.start));
    }
  }

  void check_claims() {
    std::map<std::string, std::vector<Claim>> by_key;
    for (auto c : claims_) {
      if (auto it = given_up_.find(c.holder); it != given_up_.end())
        c.end = std::min(c.end, it->second);
      by_key[c.key].push_back(c);
    }
    for (auto& [key, list] : by_key) {
      std::sort(list.begin(), list.end(),
                [](const Claim& a, const Claim& b) { return a.start < b.start; });
      for (std::size_t i = 0; i < list.size(); ++i) {
        for (std::size_t j = i + 1; j < list.size() && list[j].start < list[i].end; ++j) {
          if (list[j].holder == list[i].holder) continue;
          violation("overlap on " + key + ": " + list[i].holder + " until +" +
                    std::to_string(ms_since(origin_, list[i].end)) + " ms and " + list[j].holder +
                    " from +" + std::to_string(ms_since(origin_, list[j].start)) + " ms");
        }
      }
    }
  }

  void run_worker(std::size_t worker, std::uint64_t seed, Clock::time_point stop_at);

  Clock::time_point origin_ = Clock::now();
  std::mutex clients_mutex_;
  std::vector<std::shared_ptr<Client>> clients_ = std::vector<std::shared_ptr<Client>>(4);
  std::mutex live_mutex_;
  std::vector<std::shared_ptr<LiveLock>> live_;
  std::array<std::atomic<bool>, 5> paused_{};
  std::mutex findings_mutex_;
  std::vector<std::string> violations_;
  std::vector<Claim> claims_;
  std::vector<std::string> keyspace_;
  std::map<std::string, Clock::time_point> given_up_;
  std::atomic<int> violation_count_{0};
  std::atomic<int> samples_{0};
  std::atomic<int> acquisitions_{0};
  std::atomic<int> operations_{0};
};

void ApiSequenceTest::run_worker(std::size_t worker, std::uint64_t seed,
                                 Clock::time_point stop_at) {
  std::mt19937_64 random(seed);
  auto pick = [&](std::initializer_list<long long> choices) {
    return *(choices.begin() + random() % choices.size());
  };
  const std::array<std::string, 2> keys{"api:a", "api:b"};
  while (Clock::now() < stop_at) {
    auto client = client_of(worker);
    LockOptions options;
    options.ttl = milliseconds(pick({400, 700, 1200}));
    options.wait = milliseconds(pick({0, 0, 300, 800}));
    options.auto_extend = random() % 2 == 0;
    const auto& key = keys[random() % keys.size()];
    Result<Lock> acquired(Error{});
    if (random() % 2 == 0) {
      acquired = client->lock(key, options);
    } else {
      std::promise<Result<Lock>> promise;
      client->lock_async(key, options, [&](Result<Lock> r) { promise.set_value(std::move(r)); });
      acquired = promise.get_future().get();
    }
    ++operations_;
    if (!acquired) {
      if (acquired.error() == errc::cancelled) replace_client(worker, client);
      continue;
    }
    ++acquisitions_;
    auto live = std::make_shared<LiveLock>();
    live->key = key;
    live->lock = std::move(*acquired);
    live->history = "acquired +" + std::to_string(ms_since(origin_, Clock::now())) + " ttl " +
                    std::to_string(options.ttl.count()) +
                    (options.auto_extend ? " auto_extend" : "") + " v" +
                    std::to_string(live->lock.validity().count()) + " granted by";
    for (std::size_t i = 0; i < live->lock.nodes().size(); ++i) {
      const auto& node = live->lock.nodes()[i];
      if (node.status == NodeStatus::granted) {
        live->history +=
            " node" + std::to_string(i) + "(" + std::to_string(node.latency.count()) + "us)";
      }
    }
    publish(live);
    const int steps = 1 + static_cast<int>(random() % 5);
    for (int step = 0; step < steps && Clock::now() < stop_at; ++step) {
      ++operations_;
      switch (random() % 7) {
        case 0:
        case 1: {  // work as the owner for a while
          {
            std::lock_guard guard(live->mutex);
            claim(*live, Clock::time_point::max());
          }
          std::this_thread::sleep_for(milliseconds(pick({5, 50, 200, 500})));
          break;
        }
        case 2:
        case 6: {  // extend to a shorter or longer ttl
          std::lock_guard guard(live->mutex);
          const auto ttl = milliseconds(pick({300, 600, 2000, 5000}));
          auto extended = live->lock.extend(ttl);
          shortened(*live);
          live->history += " +" + std::to_string(ms_since(origin_, Clock::now())) + ":extend(" +
                           std::to_string(ttl.count()) +
                           ")=" + (extended ? std::string("ok") : extended.error().message()) +
                           "/v" + std::to_string(live->lock.validity().count());
          if (extended && live->lock.validity() > ttl) {
            violation("extend(" + std::to_string(ttl.count()) + " ms) left validity() at " +
                      std::to_string(live->lock.validity().count()) + " ms");
          }
          break;
        }
        case 3: {  // unlock, sync or async, sometimes twice
          std::lock_guard guard(live->mutex);
          claim(*live, Clock::now());
          gave_up(*live);
          if (random() % 2 == 0) {
            (void)live->lock.unlock();
          } else {
            std::promise<void> done;
            live->lock.unlock_async([&](Result<void>) { done.set_value(); });
            done.get_future().wait();
          }
          if (random() % 2 == 0) (void)live->lock.unlock();
          break;
        }
        case 4: {  // let it run out, then unlock
          milliseconds left;
          {
            std::lock_guard guard(live->mutex);
            left = live->lock.validity();
          }
          if (left < 1500ms) std::this_thread::sleep_for(left + 20ms);
          std::lock_guard guard(live->mutex);
          gave_up(*live);
          (void)live->lock.unlock();
          break;
        }
        default: {  // a bare validity check, as a caller about to write would do
          std::lock_guard guard(live->mutex);
          if (live->lock.lost() && live->lock.validity() > 0ms) {
            violation("lost() yet validity() " + std::to_string(live->lock.validity().count()) +
                      " ms");
          }
          break;
        }
      }
    }
    {
      std::lock_guard guard(live->mutex);
      claim(*live, Clock::now());
      gave_up(*live);
      (void)live->lock.unlock();
    }
    retire(live);
  }
}

TEST_F(ApiSequenceTest, ValidityNeverExceedsWhatAQuorumHoldsAndHoldsNeverOverlap) {
  const std::uint64_t seed = env_or("REDLOCK_API_SEED", std::random_device{}());
  const auto seconds = env_or("REDLOCK_API_SECONDS", 6);
  std::cout << "REDLOCK_API_SEED=" << seed << " REDLOCK_API_SECONDS=" << seconds << std::endl;
  RecordProperty("seed", std::to_string(seed));
  origin_ = Clock::now();
  const auto stop_at = origin_ + std::chrono::seconds(seconds);

  std::atomic<bool> running{true};
  std::vector<std::thread> keyspace_watchers;
  watch_keyspace(running, keyspace_watchers);
  // In-model faults: at most two of five nodes paused at a time, for up to 600 ms.
  std::thread faults([&, random = std::mt19937_64(seed ^ 0xfau)]() mutable {
    while (running) {
      std::this_thread::sleep_for(milliseconds(200 + random() % 500));
      if (!running) break;
      const std::size_t first = random() % 5;
      const std::size_t second = (first + 1 + random() % 4) % 5;
      const bool both = random() % 2 == 0;
      for (std::size_t node : {first, second}) {
        if (node == second && !both) continue;
        paused_[node] = true;
        cluster()[node].pause();
      }
      std::this_thread::sleep_for(milliseconds(100 + random() % 500));
      for (std::size_t node : {first, second}) {
        if (!paused_[node]) continue;
        cluster()[node].resume();
        paused_[node] = false;
      }
    }
  });
  std::thread closer([&, random = std::mt19937_64(seed ^ 0xc1u)]() mutable {
    while (running) {
      std::this_thread::sleep_for(milliseconds(700 + random() % 1000));
      if (running) close_random_client(random);
    }
  });
  std::thread sampler([&] {
    while (running) {
      std::vector<std::shared_ptr<LiveLock>> snapshot;
      {
        std::lock_guard guard(live_mutex_);
        snapshot = live_;
      }
      for (auto& live : snapshot) sample(*live);
      std::this_thread::sleep_for(15ms);
    }
  });
  std::vector<std::thread> workers;
  for (std::size_t w = 0; w < clients_.size(); ++w) {
    workers.emplace_back([this, w, seed, stop_at] { run_worker(w, seed + 1 + w, stop_at); });
  }
  for (auto& worker : workers) worker.join();
  running = false;
  closer.join();
  sampler.join();
  faults.join();
  for (std::size_t i = 0; i < cluster().size(); ++i) {
    cluster()[i].command({"SET", "api:watchers-stop", "1"});
  }
  for (auto& watcher : keyspace_watchers) watcher.join();
  {
    std::lock_guard guard(clients_mutex_);
    for (auto& client : clients_) {
      if (client) client->close();
    }
  }
  check_claims();

  std::cout << "operations " << operations_ << ", acquisitions " << acquisitions_ << ", samples "
            << samples_ << ", claims " << claims_.size() << ", violations " << violation_count_
            << std::endl;
  EXPECT_GT(acquisitions_.load(), 10) << "the run did too little to judge anything";
  EXPECT_GT(samples_.load(), 50);
  EXPECT_EQ(violation_count_.load(), 0) << "REDLOCK_API_SEED=" << seed << " replays this run";
  for (const auto& text : violations_) ADD_FAILURE() << text;
  if (violation_count_ > 0) {
    for (const auto& line : keyspace_) std::cout << line << "\n";
  }
}

}  // namespace
}  // namespace redlock

// One set of edge rules for every public operation that reaches the client's loop, sync
// and async, of every kind (include/redlock/client.hpp, "Edge rules"), enumerated: each
// operation is called with an empty callback, on a moved-from Lock (or Leadership),
// after close() (from another thread and from the loop thread itself) and on the loop
// thread, and the rule is asserted. Each edge runs in every way a client reaches its
// loop: synchronous callers that lead, that hand off, and the caller's own loop
// (Options::loop). Against five real nodes.

#include <gtest/gtest.h>
#include <uv.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include <redlock/redlock.hpp>

#include "support/lock_nodes_fixture.hpp"
#include "support/must_finish.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// The ways a client reaches its loop.
enum class Mode { lead, hand_off, callers_loop };

const char* mode_name(Mode mode) {
  switch (mode) {
    case Mode::lead:
      return "lead";
    case Mode::hand_off:
      return "hand_off";
    case Mode::callers_loop:
      return "callers_loop";
  }
  return "?";
}

using test::must_finish;

// What one callback saw: how often it ran, its first answer, on which thread, and whether
// it ran inside the call that registered it.
class Probe {
 public:
  void answer(std::error_code code) {
    std::lock_guard lock(mutex_);
    if (calls_++ == 0) {
      code_ = code;
      thread_ = std::this_thread::get_id();
      inside_call_ = in_call_.load();
    }
    changed_.notify_all();
  }
  void calling(bool on) { in_call_ = on; }
  bool wait(std::chrono::milliseconds limit = 10s) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, limit, [&] { return calls_ > 0; });
  }
  int calls() const {
    std::lock_guard lock(mutex_);
    return calls_;
  }
  std::error_code code() const {
    std::lock_guard lock(mutex_);
    return code_;
  }
  std::thread::id thread() const {
    std::lock_guard lock(mutex_);
    return thread_;
  }
  bool inside_call() const {
    std::lock_guard lock(mutex_);
    return inside_call_;
  }

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  int calls_ = 0;
  std::error_code code_;
  std::thread::id thread_;
  bool inside_call_ = false;
  std::atomic<bool> in_call_{false};
};

// An operation's callback as the tests see it: the answer's code (empty: success). An
// empty Report makes the operation get an empty callback.
using Report = std::function<void(std::error_code)>;

template <typename T>
std::function<void(Result<T>)> typed(const Report& report) {
  if (!report) return {};
  return [report](Result<T> result) { report(result.code()); };
}

// What an operation acts on.
enum class Needs { nothing, lock, leadership };

struct Subject {
  std::shared_ptr<Client> client;
  std::string key;  // unique to the operation and the edge
  Lock lock;        // Needs::lock: held (or moved from)
  std::optional<Leadership> leadership;
};

struct AsyncOp {
  const char* name;
  Needs needs;
  bool acquires;  // its result is a Lock or a Leadership
  std::function<void(Subject&, const Report&)> call;
};

struct SyncOp {
  const char* name;
  Needs needs;
  std::function<std::error_code(Subject&)> call;
};

const LockOptions short_lock{.ttl = 10s};

std::vector<AsyncOp> async_ops() {
  return {
      {"try_lock_async", Needs::nothing, true,
       [](Subject& s, const Report& r) { s.client->try_lock_async(s.key, 10s, typed<Lock>(r)); }},
      {"lock_async", Needs::nothing, true,
       [](Subject& s, const Report& r) {
         s.client->lock_async(s.key, short_lock, typed<Lock>(r));
       }},
      {"acquire_permit_async", Needs::nothing, true,
       [](Subject& s, const Report& r) {
         s.client->acquire_permit_async(s.key, {.permits = 2, .lock = short_lock}, typed<Lock>(r));
       }},
      {"read_lock_async", Needs::nothing, true,
       [](Subject& s, const Report& r) {
         s.client->read_lock_async(s.key, short_lock, typed<Lock>(r));
       }},
      {"write_lock_async", Needs::nothing, true,
       [](Subject& s, const Report& r) {
         s.client->write_lock_async(s.key, short_lock, typed<Lock>(r));
       }},
      {"lock_all_async", Needs::nothing, true,
       [](Subject& s, const Report& r) {
         const std::vector<std::string> keys = {s.key + ":a", s.key + ":b"};
         s.client->lock_all_async(keys, short_lock, typed<Lock>(r));
       }},
      {"campaign_async", Needs::nothing, true,
       [](Subject& s, const Report& r) {
         Election election(s.client, s.key, "candidate", 10s);
         election.campaign_async({}, 0ms, typed<Leadership>(r));
       }},
      {"status_async", Needs::nothing, false,
       [](Subject& s, const Report& r) {
         s.client->status_async(s.key, typed<std::vector<NodeOutcome>>(r));
       }},
      {"inspect_async", Needs::nothing, false,
       [](Subject& s, const Report& r) {
         s.client->inspect_async(s.key, typed<std::vector<NodeView>>(r));
       }},
      {"Client::release_async", Needs::lock, false,
       [](Subject& s, const Report& r) {
         // The value of a moved-from lock is empty: take the key's holder instead.
         s.client->release_async(s.key, s.lock.owned() ? s.lock.value() : "someone",
                                 typed<void>(r));
       }},
      {"Client::extend_async", Needs::lock, false,
       [](Subject& s, const Report& r) {
         s.client->extend_async(s.key, s.lock.owned() ? s.lock.value() : "someone", 60s,
                                typed<std::chrono::milliseconds>(r));
       }},
      {"Lock::extend_async", Needs::lock, false,
       [](Subject& s, const Report& r) { s.lock.extend_async(60s, typed<void>(r)); }},
      {"Lock::unlock_async", Needs::lock, false,
       [](Subject& s, const Report& r) { s.lock.unlock_async(typed<void>(r)); }},
  };
}

std::vector<SyncOp> sync_ops() {
  return {
      {"try_lock", Needs::nothing,
       [](Subject& s) { return s.client->try_lock(s.key, 10s).code(); }},
      {"lock", Needs::nothing, [](Subject& s) { return s.client->lock(s.key, short_lock).code(); }},
      {"acquire_permit", Needs::nothing,
       [](Subject& s) {
         return s.client->acquire_permit(s.key, {.permits = 2, .lock = short_lock}).code();
       }},
      {"read_lock", Needs::nothing,
       [](Subject& s) { return s.client->read_lock(s.key, short_lock).code(); }},
      {"write_lock", Needs::nothing,
       [](Subject& s) { return s.client->write_lock(s.key, short_lock).code(); }},
      {"lock_all", Needs::nothing,
       [](Subject& s) {
         const std::vector<std::string> keys = {s.key + ":a", s.key + ":b"};
         return s.client->lock_all(keys, short_lock).code();
       }},
      {"status", Needs::nothing, [](Subject& s) { return s.client->status(s.key).code(); }},
      {"inspect", Needs::nothing, [](Subject& s) { return s.client->inspect(s.key).code(); }},
      {"Client::release", Needs::lock,
       [](Subject& s) {
         return s.client->release(s.key, s.lock.owned() ? s.lock.value() : "someone").code();
       }},
      {"Client::extend", Needs::lock,
       [](Subject& s) {
         return s.client->extend(s.key, s.lock.owned() ? s.lock.value() : "someone", 60s).code();
       }},
      {"Lock::extend", Needs::lock, [](Subject& s) { return s.lock.extend(60s).code(); }},
      {"Lock::unlock", Needs::lock, [](Subject& s) { return s.lock.unlock().code(); }},
      {"ReentrantLock::unlock", Needs::lock,
       [](Subject& s) {
         ReentrantLock reentrant(std::move(s.lock));
         auto code = reentrant.unlock().code();
         s.lock = std::move(reentrant.lock());
         return code;
       }},
      {"campaign", Needs::nothing,
       [](Subject& s) {
         Election election(s.client, s.key, "candidate", 10s);
         return election.campaign({}, 0ms).code();
       }},
      {"leader", Needs::nothing,
       [](Subject& s) {
         Election election(s.client, s.key, "candidate", 10s);
         return election.leader().code();
       }},
      {"observe", Needs::nothing,
       [](Subject& s) {
         // Returns at once at every edge; a stop after two seconds ends it otherwise (with
         // success, which no edge expects).
         Election election(s.client, s.key, "candidate", 10s);
         std::stop_source stop;
         std::jthread stopper([stop](std::stop_token ended) mutable {
           std::mutex mutex;
           std::condition_variable_any never;
           std::unique_lock lock(mutex);
           never.wait_for(lock, ended, 2s, [] { return false; });
           stop.request_stop();
         });
         return election.observe(stop.get_token(), [](const std::optional<Leader>&) {}).code();
       }},
      {"Leadership::resign", Needs::leadership,
       [](Subject& s) { return s.leadership->resign().code(); }},
  };
}

// What the destructor of a Lock promises at every edge: it returns without waiting for
// a loop that cannot answer (after close(), on the loop thread, moved from).
std::chrono::milliseconds destroy_timed(Lock& lock) {
  const auto start = Clock::now();
  { Lock gone = std::move(lock); }
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
}

class CallEdgesTest : public test::LockNodesTest, public ::testing::WithParamInterface<Mode> {
 protected:
  void SetUp() override {
    LockNodesTest::SetUp();
    auto opts = options();
    switch (GetParam()) {
      case Mode::lead:
        opts.sync_calls = SyncCalls::lead;
        break;
      case Mode::hand_off:
        opts.sync_calls = SyncCalls::hand_off;
        break;
      case Mode::callers_loop:
        loop_ = std::make_unique<uv_loop_t>();
        ASSERT_EQ(uv_loop_init(loop_.get()), 0);
        opts.loop = loop_.get();
        break;
    }
    client_ = Client::create(opts);
    if (loop_) {
      runner_ = std::thread([loop = loop_.get()] { uv_run(loop, UV_RUN_DEFAULT); });
    }
  }

  void TearDown() override {
    client_.reset();
    if (runner_.joinable()) {
      // The shutdown completes on the loop's next turns; then uv_run returns.
      std::promise<void> joined;
      auto future = joined.get_future();
      std::thread joiner([&] {
        runner_.join();
        joined.set_value();
      });
      must_finish(future, 10000ms, "the caller's loop after close()");
      joiner.join();
      EXPECT_EQ(uv_loop_close(loop_.get()), 0);
    }
    LockNodesTest::TearDown();
  }

  std::string key_for(const std::string& edge, const char* op) const {
    return std::string("edges:") + mode_name(GetParam()) + ":" + edge + ":" + op;
  }

  // A subject for `op`: a lock or a leadership of its own key when it needs one.
  Subject subject(const std::string& edge, const char* op, Needs needs) {
    Subject s{client_, key_for(edge, op), Lock(), std::nullopt};
    if (needs == Needs::lock) {
      auto lock = client_->lock(s.key, {.ttl = 10s});
      EXPECT_TRUE(lock) << op << ": " << lock.error().message();
      if (lock) s.lock = std::move(*lock);
    } else if (needs == Needs::leadership) {
      Election election(client_, s.key, "candidate", 10s);
      auto won = election.campaign({}, 0ms);
      EXPECT_TRUE(won) << op << ": " << won.error().message();
      if (won) s.leadership.emplace(std::move(*won));
    }
    return s;
  }

  // Runs `work` on the client's loop thread (inside a callback) and waits for it.
  void on_loop_thread(const std::function<void()>& work) {
    std::promise<void> done;
    auto future = done.get_future();
    client_->status_async("edges:hop", [&](Result<std::vector<NodeOutcome>>) {
      work();
      done.set_value();
    });
    must_finish(future, 30000ms, "work on the loop thread");
  }

  // Every key on the lock nodes whose name contains `part`.
  static std::vector<std::string> keys_with(const std::string& part) {
    std::vector<std::string> found;
    for (std::size_t node = 0; node < cluster().size(); ++node) {
      auto reply = cluster()[node].command({"KEYS", "*" + part + "*"});
      for (const auto& element : reply.elements) found.push_back(element.str);
    }
    return found;
  }

  // The longest PTTL of `key` on a quorum of nodes (the third largest).
  static long long quorum_pttl(const std::string& key) {
    std::vector<long long> ttls;
    for (std::size_t node = 0; node < cluster().size(); ++node) {
      ttls.push_back(cluster()[node].command({"PTTL", key}).integer);
    }
    std::sort(ttls.rbegin(), ttls.rend());
    return ttls[2];
  }

  std::shared_ptr<Client> client_;
  std::unique_ptr<uv_loop_t> loop_;
  std::thread runner_;
};

// An empty callback: nobody is told. An acquisition then acquires nothing (nobody would
// hold what it took); every other operation runs as it would with a callback. Nothing is
// thrown and nothing is reported on stderr.
TEST_P(CallEdgesTest, AnEmptyCallbackMeansNobodyIsTold) {
  for (const auto& op : async_ops()) {
    SCOPED_TRACE(op.name);
    auto s = subject("empty", op.name, op.needs);
    ::testing::internal::CaptureStderr();
    EXPECT_NO_THROW(op.call(s, Report()));
    std::this_thread::sleep_for(300ms);  // whatever the call started has ended by now
    const std::string said = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(said, "") << "an empty callback was reported";
    if (op.acquires) {
      EXPECT_EQ(keys_with(s.key), std::vector<std::string>())
          << "an acquisition with an empty callback took something";
    } else if (op.needs == Needs::lock) {
      const std::string name = op.name;
      if (name.find("release") != std::string::npos || name.find("unlock") != std::string::npos) {
        EXPECT_TRUE(gone_everywhere(s.key)) << "the release did not run";
      } else {
        EXPECT_TRUE(eventually([&] { return quorum_pttl(s.key) > 30'000; }))
            << "the extension did not run";
      }
    }
  }
}

// A moved-from Lock holds nothing and has no client to reach: every call answers at once
// on the calling thread (its callback inside the call): extend not_held, unlock success.
// The lock it was moved into is untouched.
TEST_P(CallEdgesTest, AMovedFromLockAnswersAtOnce) {
  for (const auto& op : async_ops()) {
    if (op.needs != Needs::lock || std::string(op.name).rfind("Lock::", 0) != 0) continue;
    SCOPED_TRACE(op.name);
    auto s = subject("moved-async", op.name, op.needs);
    Lock holder = std::move(s.lock);
    Probe probe;
    probe.calling(true);
    EXPECT_NO_THROW(op.call(s, [&](std::error_code code) { probe.answer(code); }));
    probe.calling(false);
    EXPECT_EQ(probe.calls(), 1) << "not answered at once, exactly once";
    EXPECT_EQ(probe.thread(), std::this_thread::get_id());
    const bool unlock = std::string(op.name) == "Lock::unlock_async";
    EXPECT_EQ(probe.code(), unlock ? std::error_code() : make_error_code(errc::not_held));
    ::testing::internal::CaptureStderr();
    EXPECT_NO_THROW(op.call(s, Report()));
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
    EXPECT_TRUE(holder.owned());
    EXPECT_GT(quorum_pttl(s.key), 0) << "the lock it was moved into was released";
    EXPECT_LT(destroy_timed(s.lock), 50ms);
  }
  for (const auto& op : sync_ops()) {
    const std::string name = op.name;
    // The Lock's own operations (and those of what owns one); Client::release and
    // Client::extend take a key and a value, not a Lock.
    if (op.needs == Needs::nothing || name.rfind("Client::", 0) == 0) continue;
    SCOPED_TRACE(op.name);
    auto s = subject("moved-sync", op.name, op.needs);
    Lock holder = std::move(s.lock);
    std::optional<Leadership> leader;
    if (s.leadership) {
      leader.emplace(std::move(*s.leadership));
    }
    const auto code = op.call(s);
    if (name == "Lock::unlock") {
      EXPECT_EQ(code, std::error_code()) << "nothing to release: done";
    } else {
      EXPECT_EQ(code, make_error_code(errc::not_held));
    }
    if (op.needs == Needs::lock) {
      EXPECT_TRUE(holder.owned());
      EXPECT_GT(quorum_pttl(s.key), 0) << "the lock it was moved into was released";
    } else {
      EXPECT_TRUE(leader && leader->validity() > 0ms);
    }
  }
}

// After close() (from another thread, or from the loop thread itself) nothing reaches the
// loop: every synchronous call returns errc::cancelled and every callback runs at once on
// the calling thread, inside the call, with errc::cancelled, exactly once; an empty one is
// not called. A Lock held from before releases nothing and its destructor does not wait.
TEST_P(CallEdgesTest, AfterCloseEverythingIsCancelledAtOnce) {
  for (const bool from_loop : {false, true}) {
    SCOPED_TRACE(from_loop ? "closed on the loop thread" : "closed from another thread");
    const std::string edge = from_loop ? "closed-loop" : "closed";
    {
      std::vector<Subject> async_subjects;
      std::vector<Subject> sync_subjects;
      for (const auto& op : async_ops()) async_subjects.push_back(subject(edge, op.name, op.needs));
      for (const auto& op : sync_ops()) sync_subjects.push_back(subject(edge, op.name, op.needs));
      Subject dropped = subject(edge, "~Lock", Needs::lock);
      auto check_all = [&] {
        const auto ops = async_ops();
        for (std::size_t i = 0; i < ops.size(); ++i) {
          SCOPED_TRACE(ops[i].name);
          Probe probe;
          probe.calling(true);
          EXPECT_NO_THROW(
              ops[i].call(async_subjects[i], [&](std::error_code c) { probe.answer(c); }));
          probe.calling(false);
          EXPECT_EQ(probe.calls(), 1) << "not answered at once, exactly once";
          EXPECT_EQ(probe.thread(), std::this_thread::get_id());
          EXPECT_EQ(probe.code(), make_error_code(errc::cancelled));
          EXPECT_NO_THROW(ops[i].call(async_subjects[i], Report()));
        }
        const auto syncs = sync_ops();
        for (std::size_t i = 0; i < syncs.size(); ++i) {
          SCOPED_TRACE(syncs[i].name);
          const auto start = Clock::now();
          EXPECT_EQ(syncs[i].call(sync_subjects[i]), make_error_code(errc::cancelled));
          EXPECT_LT(Clock::now() - start, 1s) << "waited after close()";
        }
        EXPECT_LT(destroy_timed(dropped.lock), 50ms);
      };
      if (from_loop) {
        on_loop_thread([&] {
          client_->close();
          ::testing::internal::CaptureStderr();
          check_all();
          EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
        });
      } else {
        client_->close();
        ::testing::internal::CaptureStderr();
        check_all();
        EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
      }
    }
    // The next round needs an open client.
    TearDown();
    SetUp();
  }
}

// On the loop thread (inside a callback) a synchronous call would wait for itself: each
// returns errc::invalid_argument at once, sending nothing, and a Lock's destructor
// releases without waiting. Every asynchronous call works there, its callback never
// inside the call, on the loop thread.
TEST_P(CallEdgesTest, OnTheLoopThreadSyncCallsAreRefusedAndAsyncOnesWork) {
  const auto syncs = sync_ops();
  const auto asyncs = async_ops();
  std::vector<Subject> sync_subjects;
  std::vector<Subject> async_subjects;
  for (const auto& op : syncs) sync_subjects.push_back(subject("loop-sync", op.name, op.needs));
  for (const auto& op : asyncs) async_subjects.push_back(subject("loop-async", op.name, op.needs));
  Subject dropped = subject("loop", "~Lock", Needs::lock);
  std::vector<std::unique_ptr<Probe>> probes;
  for (std::size_t i = 0; i < asyncs.size(); ++i) probes.push_back(std::make_unique<Probe>());
  std::thread::id loop_thread;
  on_loop_thread([&] {
    loop_thread = std::this_thread::get_id();
    for (std::size_t i = 0; i < syncs.size(); ++i) {
      SCOPED_TRACE(syncs[i].name);
      const auto start = Clock::now();
      EXPECT_EQ(syncs[i].call(sync_subjects[i]), make_error_code(errc::invalid_argument));
      EXPECT_LT(Clock::now() - start, 1s);
    }
    EXPECT_LT(destroy_timed(dropped.lock), 50ms);
    for (std::size_t i = 0; i < asyncs.size(); ++i) {
      auto& probe = *probes[i];
      probe.calling(true);
      asyncs[i].call(async_subjects[i], [&probe](std::error_code c) { probe.answer(c); });
      probe.calling(false);
    }
  });
  for (std::size_t i = 0; i < asyncs.size(); ++i) {
    SCOPED_TRACE(asyncs[i].name);
    auto& probe = *probes[i];
    ASSERT_TRUE(probe.wait()) << "never answered";
    EXPECT_FALSE(probe.inside_call()) << "answered inside the call";
    EXPECT_EQ(probe.thread(), loop_thread);
    EXPECT_EQ(probe.code(), std::error_code());
  }
  std::this_thread::sleep_for(100ms);
  for (const auto& probe : probes) EXPECT_EQ(probe->calls(), 1);
  EXPECT_TRUE(gone_everywhere(dropped.key)) << "the destructor on the loop thread released nothing";
  for (std::size_t i = 0; i < syncs.size(); ++i) {
    if (syncs[i].needs != Needs::nothing) continue;
    EXPECT_EQ(keys_with(sync_subjects[i].key), std::vector<std::string>())
        << syncs[i].name << " sent something";
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, CallEdgesTest,
                         ::testing::Values(Mode::lead, Mode::hand_off, Mode::callers_loop),
                         [](const ::testing::TestParamInfo<Mode>& info) {
                           return mode_name(info.param);
                         });

}  // namespace
}  // namespace redlock

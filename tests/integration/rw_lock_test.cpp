// The read-write lock against five real redis-server processes: readers share, a writer
// excludes readers and writers, each reader's share expires on its own, a waiting writer
// keeps new readers out so a stream of readers cannot starve it, waiting readers are all
// let in by a writer's release, and writers get increasing fencing tokens.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>

#include "support/lock_nodes_fixture.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

class RwLockTest : public test::LockNodesTest {
 protected:
  /// The expiry (node ms) of `field` ("r:<value>", "w:<value>") of `key` on `node`, or -1.
  static long long entry(std::size_t node, const std::string& key, const std::string& field) {
    auto reply = cluster()[node].command({"HGET", key, field});
    return reply.is_nil() ? -1 : std::stoll(reply.str);
  }
  /// Intent entries ("i:...") of `key` on `node`.
  static int intents(std::size_t node, const std::string& key) {
    auto reply = cluster()[node].command({"HKEYS", key});
    int n = 0;
    for (const auto& field : reply.elements) n += field.str.rfind("i:", 0) == 0;
    return n;
  }
  /// A release, extend or a writer's withdrawal is decided once a quorum answered; the
  /// last node is a moment behind. status() waits for every node, and each node answers
  /// a client's commands in order, so after it every node has applied what came before.
  static void settle(Client& client) { (void)client.status("doc"); }
};

TEST_F(RwLockTest, ReadersShareAndAWriterExcludesBoth) {
  auto client = Client::create(options());
  auto first = client->read_lock("doc", {.ttl = 10s});
  auto second = client->read_lock("doc", {.ttl = 10s});
  ASSERT_TRUE(first) << first.error().message();
  ASSERT_TRUE(second) << second.error().message();
  EXPECT_FALSE(first->fencing_token());

  auto writer = client->write_lock("doc", {.ttl = 10s});
  ASSERT_FALSE(writer);
  EXPECT_EQ(writer.error(), errc::conflict);
  EXPECT_THAT(writer.error().message(), HasSubstr("write lock \"doc\""));
  EXPECT_THAT(writer.error().message(), HasSubstr("2 readers hold it"));
  settle(*client);
  for (std::size_t node = 0; node < 5; ++node) {
    EXPECT_EQ(intents(node, "doc"), 0) << "a writer that gave up left its intent";
  }

  ASSERT_TRUE(first->unlock());
  ASSERT_TRUE(second->unlock());
  writer = client->write_lock("doc", {.ttl = 10s});
  ASSERT_TRUE(writer) << writer.error().message();
  auto reader = client->read_lock("doc", {.ttl = 10s});
  ASSERT_FALSE(reader);
  EXPECT_EQ(reader.error(), errc::conflict);
  EXPECT_THAT(reader.error().message(), HasSubstr("a writer holds it"));
  auto other_writer = client->write_lock("doc", {.ttl = 10s});
  EXPECT_EQ(other_writer.code(), make_error_code(errc::conflict));
}

TEST_F(RwLockTest, EachReaderExpiresOnItsOwnAndTouchesOnlyItsOwnShare) {
  auto client = Client::create(options());
  auto brief = client->read_lock("doc", {.ttl = 300ms});
  auto lasting = client->read_lock("doc", {.ttl = 10s});
  ASSERT_TRUE(brief && lasting);
  settle(*client);
  std::vector<long long> lasting_before;
  for (std::size_t node = 0; node < 5; ++node) {
    lasting_before.push_back(entry(node, "doc", "r:" + lasting->value()));
  }
  std::this_thread::sleep_for(400ms);
  // The brief reader's share is gone; the lasting one still keeps writers out.
  EXPECT_EQ(client->write_lock("doc", {.ttl = 10s}).code(), make_error_code(errc::conflict));
  for (std::size_t node = 0; node < 5; ++node) {
    EXPECT_EQ(entry(node, "doc", "r:" + brief->value()), -1) << "expired share kept";
    EXPECT_EQ(entry(node, "doc", "r:" + lasting->value()), lasting_before[node]);
  }
  auto third = client->read_lock("doc", {.ttl = 5s});
  ASSERT_TRUE(third);
  ASSERT_TRUE(third->extend(30s));
  ASSERT_TRUE(third->unlock());
  settle(*client);
  for (std::size_t node = 0; node < 5; ++node) {
    EXPECT_EQ(entry(node, "doc", "r:" + lasting->value()), lasting_before[node])
        << "another reader's extend or release touched this share";
  }
}

TEST_F(RwLockTest, AWaitingWriterKeepsNewReadersOut) {
  auto readers = Client::create(options());
  auto writers = Client::create(options());
  auto holder = readers->read_lock("doc", {.ttl = 800ms});
  ASSERT_TRUE(holder);
  auto writer = std::async(std::launch::async,
                           [&] { return writers->write_lock("doc", {.ttl = 10s, .wait = 5s}); });
  std::this_thread::sleep_for(100ms);
  auto late_reader = readers->read_lock("doc", {.ttl = 10s});
  ASSERT_FALSE(late_reader);
  EXPECT_EQ(late_reader.error(), errc::conflict);
  EXPECT_THAT(late_reader.error().message(), HasSubstr("a writer waits"));
  // The first reader's share ends on its own; the writer gets in.
  auto written = writer.get();
  ASSERT_TRUE(written) << written.error().message();
  settle(*writers);
  for (std::size_t node = 0; node < 5; ++node) EXPECT_EQ(intents(node, "doc"), 0);
}

TEST_F(RwLockTest, AStreamOfOverlappingReadersDoesNotStarveAWriter) {
  // Four readers take turns so that some reader always holds the key: each holds for
  // 150 ms and takes it again at once. Without the writer's intent, a writer could only
  // get in when no reader held it on a majority — never, while the stream lasts (4 s).
  auto options_fast = options();
  options_fast.retry_delay = 20ms;
  options_fast.retry_jitter = 10ms;
  auto reader_client = Client::create(options_fast);
  auto writer_client = Client::create(options_fast);
  std::atomic<bool> stop{false};
  std::atomic<int> reads{0};
  std::atomic<int> overlaps_with_writer{0};
  std::atomic<bool> writing{false};
  std::vector<std::thread> readers;
  for (int r = 0; r < 4; ++r) {
    readers.emplace_back([&, r] {
      std::this_thread::sleep_for(std::chrono::milliseconds(40 * r));
      const auto until = Clock::now() + 4s;
      while (!stop && Clock::now() < until) {
        auto share = reader_client->read_lock("doc", {.ttl = 5s, .wait = 5s});
        if (!share) continue;
        if (writing) ++overlaps_with_writer;
        ++reads;
        std::this_thread::sleep_for(150ms);
        if (writing) ++overlaps_with_writer;
        (void)share->unlock();
      }
    });
  }
  std::this_thread::sleep_for(500ms);
  const int reads_before = reads;
  const auto asked = Clock::now();
  auto writer = writer_client->write_lock("doc", {.ttl = 5s, .wait = 3s});
  const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - asked);
  if (writer) {
    writing = true;
    std::this_thread::sleep_for(100ms);
    writing = false;
    (void)writer->unlock();
  }
  stop = true;
  for (auto& thread : readers) thread.join();
  std::printf("writer waited %lld ms under a stream of readers (%d reads before it asked)\n",
              static_cast<long long>(waited.count()), reads_before);
  ASSERT_TRUE(writer) << writer.error().message();
  EXPECT_GT(reads_before, 4) << "the readers did not overlap";
  // A reader's hold is 150 ms: the writer waits for the readers already in, not for the
  // stream to end.
  EXPECT_LT(waited, 1000ms);
  EXPECT_EQ(overlaps_with_writer, 0);
}

TEST_F(RwLockTest, AWritersReleaseLetsEveryWaitingReaderIn) {
  auto writer_client = Client::create(options());
  auto reader_client = Client::create(slow_polling());
  auto writer = writer_client->write_lock("doc", {.ttl = 30s});
  ASSERT_TRUE(writer);
  std::vector<std::future<std::pair<std::error_code, Clock::time_point>>> waiting;
  for (int i = 0; i < 3; ++i) {
    waiting.push_back(std::async(std::launch::async, [&] {
      auto share = reader_client->read_lock("doc", {.ttl = 10s, .wait = 20s});
      return std::make_pair(share.code(), Clock::now());
    }));
  }
  std::this_thread::sleep_for(300ms);
  const auto released = Clock::now();
  ASSERT_TRUE(writer->unlock());
  for (auto& reader : waiting) {
    auto [code, at] = reader.get();
    EXPECT_EQ(code, std::error_code());
    std::printf("waiting reader in %lld ms after the writer's release\n",
                static_cast<long long>(
                    std::chrono::duration_cast<std::chrono::milliseconds>(at - released).count()));
    EXPECT_LT(at - released, 2s) << "a waiting reader polled instead of being let in";
  }
}

// The first node to apply a writer's release announces it; the waiter woken by that can
// reach the other nodes before the release does and be refused by the writer it knows is
// leaving. The other nodes' announcements carry the same value and wake no one again, so
// the waiter must not then sleep for the writer's whole TTL. Here the announcement comes
// first by hand and the writer's fields go 200 ms later, silently.
TEST_F(RwLockTest, AWaiterRefusedByAHolderAlreadyAnnouncedAsReleasedRetriesSoon) {
  auto writer_client = Client::create(options());
  auto reader_client = Client::create(slow_polling());
  auto writer = writer_client->write_lock("doc", {.ttl = 30s});
  ASSERT_TRUE(writer);
  auto reader = std::async(std::launch::async, [&] {
    auto share = reader_client->read_lock("doc", {.ttl = 10s, .wait = 20s});
    return std::make_pair(share.code(), Clock::now());
  });
  std::this_thread::sleep_for(300ms);  // refused once, asleep on the writer's TTL
  for (std::size_t node = 0; node < cluster().size(); ++node) {
    cluster()[node].command({"PUBLISH", "doc:released", writer->value()});
  }
  std::this_thread::sleep_for(200ms);  // woken, refused again by the "leaving" writer
  const auto released = Clock::now();
  for (std::size_t node = 0; node < cluster().size(); ++node) {
    cluster()[node].command({"HDEL", "doc", "w:" + writer->value()});
  }
  ASSERT_EQ(reader.wait_for(5s), std::future_status::ready)
      << "the waiter slept on a holder that had announced its release";
  auto [code, at] = reader.get();
  EXPECT_EQ(code, std::error_code());
  // Retries come within jittered, doubling spans of two node timeouts (at most about
  // 0.8 s after four refusals here); before the fix it slept until its 20 s wait ended.
  EXPECT_LT(at - released, 2s);
}

TEST_F(RwLockTest, WritersGetIncreasingFencingTokensReadersNone) {
  auto client = Client::create(options());
  std::uint64_t last = 0;
  for (int i = 0; i < 3; ++i) {
    auto writer = client->write_lock("doc", {.ttl = 10s, .fencing = true});
    ASSERT_TRUE(writer) << writer.error().message();
    ASSERT_TRUE(writer->fencing_token());
    EXPECT_GT(*writer->fencing_token(), last);
    last = *writer->fencing_token();
  }
  auto fenced_reader = client->read_lock("doc", {.ttl = 10s, .fencing = true});
  EXPECT_EQ(fenced_reader.error(), errc::invalid_argument);
  EXPECT_THAT(fenced_reader.error().message(), HasSubstr("readers carry no fencing token"));
}

TEST_F(RwLockTest, AKeyOfAnotherKindIsAClearError) {
  auto client = Client::create(options());
  auto permit = client->acquire_permit("name", {.permits = 2, .lock = {.ttl = 10s}});
  ASSERT_TRUE(permit);
  auto reader = client->read_lock("name", {.ttl = 10s});
  EXPECT_EQ(reader.error(), errc::wrong_kind);
  EXPECT_THAT(reader.error().message(), HasSubstr("the key is a semaphore"));
  auto share = client->read_lock("doc", {.ttl = 10s});
  ASSERT_TRUE(share);
  auto exclusive = client->try_lock("doc", 10s);
  EXPECT_EQ(exclusive.error(), errc::wrong_kind);
  EXPECT_THAT(exclusive.error().message(), HasSubstr("the key is a read-write lock"));
  EXPECT_EQ(client->acquire_permit("doc", {.permits = 2, .lock = {.ttl = 10s}}).error(),
            errc::wrong_kind);
}

}  // namespace
}  // namespace redlock

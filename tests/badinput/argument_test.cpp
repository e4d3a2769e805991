// Rows of the bad-input table about what the caller passes per operation: TTLs, key
// sizes, binary keys. Bad arguments are refused before anything is sent, with a message
// that names the operation and the field; good ones at the edges must work end to end.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include <redlock/redlock.hpp>

#include "harness.hpp"

namespace redlock::badinput {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class ArgumentTest : public ::testing::Test {
 protected:
  void SetUp() override { client_ = Client::create(options(healthy_urls(5))); }

  Client& client() { return *client_; }

  // Nothing of `key` (nor of its fencing counter) reached any node.
  // unlock() returns once a quorum confirmed the release; the other nodes get it a moment
  // later, so each node is given up to a second before the key counts as left behind.
  void expect_untouched(const std::string& key) {
    for (std::size_t i = 0; i < 5; ++i) {
      for (int tries = 0; tries < 100 && healthy()[i].command({"EXISTS", key}).integer != 0;
           ++tries) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      EXPECT_EQ(healthy()[i].command({"EXISTS", key}).integer, 0) << "node " << i;
    }
  }

 private:
  std::shared_ptr<Client> client_;
};

TEST_F(ArgumentTest, ZeroTtlIsRefusedBeforeSending) {
  const std::string key = test_key();
  auto lock = client().try_lock(key, 0ms);
  ASSERT_FALSE(lock);
  RecordProperty("message", lock.error().message());
  EXPECT_EQ(lock.error(), errc::invalid_argument);
  EXPECT_EQ(lock.error().message(), "lock: ttl: must be > 0, got 0 ms");
  EXPECT_TRUE(lock.error().nodes().empty());
  expect_untouched(key);
}

TEST_F(ArgumentTest, NegativeTtlIsRefusedByEveryOperation) {
  const std::string key = test_key();
  auto lock = client().lock(key, {.ttl = -5s});
  ASSERT_FALSE(lock);
  RecordProperty("message", lock.error().message());
  EXPECT_EQ(lock.error(), errc::invalid_argument);
  EXPECT_EQ(lock.error().message(), "lock: ttl: must be > 0, got -5000 ms");

  auto extended = client().extend(key, "some-value", -1ms);
  ASSERT_FALSE(extended);
  EXPECT_EQ(extended.error(), errc::invalid_argument);
  EXPECT_EQ(extended.error().message(), "extend: ttl: must be > 0, got -1 ms");

  auto held = client().try_lock(key, ttl);
  ASSERT_TRUE(held) << held.error().message();
  auto again = held->extend(0ms);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error(), errc::invalid_argument);
  EXPECT_THAT(again.error().message(), StartsWith("extend: ttl: must be > 0"));
  EXPECT_TRUE(held->owned());  // a refused extension leaves the lock as it was
  ASSERT_TRUE(held->unlock());
  expect_untouched(key);
}

TEST_F(ArgumentTest, TtlNotLongerThanTwoNodeTimeoutsIsRefused) {
  const std::string key = test_key();
  auto lock = client().try_lock(key, 2 * node_timeout);
  ASSERT_FALSE(lock);
  RecordProperty("message", lock.error().message());
  EXPECT_EQ(lock.error(), errc::invalid_argument);
  EXPECT_THAT(lock.error().message(),
              HasSubstr("ttl: 4000 ms must be longer than 2 x node_timeout (2000 ms)"));
  expect_untouched(key);
}

TEST_F(ArgumentTest, KeyLongerThanMaxKeyBytesIsRefusedByEveryOperation) {
  const std::string key(Options{}.max_key_bytes + 1, 'k');
  const std::string expected = "key: 65537 bytes is longer than max_key_bytes (65536)";
  auto lock = client().try_lock(key, ttl);
  ASSERT_FALSE(lock);
  RecordProperty("message", lock.error().message());
  EXPECT_EQ(lock.error(), errc::invalid_argument);
  EXPECT_EQ(lock.error().message(), "lock: " + expected);
  auto status = client().status(key);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message(), "status: " + expected);
  auto released = client().release(key, "v");
  ASSERT_FALSE(released);
  EXPECT_EQ(released.error().message(), "release: " + expected);
  auto extended = client().extend(key, "v", ttl);
  ASSERT_FALSE(extended);
  EXPECT_EQ(extended.error().message(), "extend: " + expected);
  expect_untouched(key);
}

TEST_F(ArgumentTest, KeyOfExactlyMaxKeyBytesLocksAndUnlocks) {
  const std::string key(Options{}.max_key_bytes, 'k');
  auto lock = client().try_lock(key, ttl);
  ASSERT_TRUE(lock) << lock.error().message();
  auto status = client().status(key);
  ASSERT_TRUE(status) << status.error().message();
  for (const auto& node : *status) {
    EXPECT_EQ(node.status, NodeStatus::held) << describe(node);
    EXPECT_EQ(node.holder, lock->value());
  }
  ASSERT_TRUE(lock->unlock());
  expect_not_held(client(), key, {0, 1, 2, 3, 4});
}

TEST_F(ArgumentTest, SmallerMaxKeyBytesIsEnforcedAtItsEdge) {
  auto opts = options(healthy_urls(5));
  opts.max_key_bytes = 16;
  auto client = Client::create(opts);
  const std::string base = test_key();
  auto fits = client->try_lock(base.substr(0, 16), ttl);
  ASSERT_TRUE(fits) << fits.error().message();
  auto too_long = client->try_lock(base.substr(0, 17), ttl);
  ASSERT_FALSE(too_long);
  EXPECT_EQ(too_long.error(), errc::invalid_argument);
  EXPECT_EQ(too_long.error().message(), "lock: key: 17 bytes is longer than max_key_bytes (16)");
}

TEST_F(ArgumentTest, EmptyKeyIsRefused) {
  auto lock = client().try_lock("", ttl);
  ASSERT_FALSE(lock);
  RecordProperty("message", lock.error().message());
  EXPECT_EQ(lock.error(), errc::invalid_argument);
  EXPECT_EQ(lock.error().message(), "lock: key: must not be empty");
}

// Keys are byte strings end to end (RESP bulk strings, Lua strings): a NUL inside must
// neither truncate the key nor make two keys one, and messages show it escaped.
TEST_F(ArgumentTest, BinaryKeyWithNulBytesLocksShowsStatusAndUnlocks) {
  const std::string prefix = "badinput-bin";
  const std::string key = prefix + std::string("\0bin\0\xff\x01", 7);
  auto lock = client().try_lock(key, ttl);
  ASSERT_TRUE(lock) << lock.error().message();

  auto status = client().status(key);
  ASSERT_TRUE(status) << status.error().message();
  for (const auto& node : *status) {
    EXPECT_EQ(node.status, NodeStatus::held) << describe(node);
    EXPECT_EQ(node.holder, lock->value());
  }
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(healthy()[i].command({"GET", key}).str, lock->value()) << "node " << i;
    EXPECT_EQ(healthy()[i].command({"EXISTS", prefix}).integer, 0) << "node " << i;
  }
  // The key up to its first NUL is another, free resource.
  auto other = client().try_lock(prefix, ttl);
  ASSERT_TRUE(other) << other.error().message();
  ASSERT_TRUE(other->unlock());

  auto second = Client::create(options(healthy_urls(5)))->try_lock(key, ttl);
  ASSERT_FALSE(second);
  RecordProperty("message", second.error().message());
  EXPECT_EQ(second.error(), errc::conflict);
  EXPECT_THAT(second.error().message(),
              StartsWith("lock \"badinput-bin\\x00bin\\x00\xff\\x01\" not acquired: "));
  EXPECT_EQ(second.error().message().find('\0'), std::string::npos);

  ASSERT_TRUE(lock->unlock());
  expect_not_held(client(), key, {0, 1, 2, 3, 4});
  for (std::size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(healthy()[i].command({"EXISTS", key}).integer, 0) << "node " << i;
  }
}

}  // namespace
}  // namespace redlock::badinput

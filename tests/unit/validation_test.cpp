// Input checks: each bad input is refused with a message naming the field and value.

#include "core/validation.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <set>

#include "core/lock_value.hpp"

namespace redlock::core {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

Options five_nodes() {
  Options options;
  for (int i = 1; i <= 5; ++i) options.nodes.push_back("redis://127.0.0.1:710" + std::to_string(i));
  return options;
}

std::vector<std::string> ids(const Options& options) {
  return options.nodes;
}

TEST(Validation, DefaultsPass) {
  auto options = five_nodes();
  EXPECT_EQ(check_options(options, ids(options)), std::nullopt);
  EXPECT_EQ(effective_quorum(0, 5), 3);
  EXPECT_EQ(effective_quorum(0, 4), 3);
  EXPECT_EQ(effective_quorum(0, 1), 1);
}

TEST(Validation, MemberGuardLongestTtlIsNamedWhenOutOfRange) {
  auto options = five_nodes();
  options.member_guard.longest_ttl = std::chrono::milliseconds(-1);
  EXPECT_THAT(check_options(options, ids(options)).value_or(""),
              HasSubstr("member_guard.longest_ttl: must be in [0, "));
  options.member_guard.longest_ttl = max_ttl + std::chrono::milliseconds(1);
  EXPECT_THAT(check_options(options, ids(options)).value_or(""),
              HasSubstr("member_guard.longest_ttl"));
  options.member_guard.longest_ttl = max_ttl;
  EXPECT_EQ(check_options(options, ids(options)), std::nullopt);
}

TEST(Validation, MemberGuardReplicasToAckIsNamedWhenOutOfRange) {
  auto options = five_nodes();
  options.member_guard.replicas_to_ack = -1;
  EXPECT_THAT(check_options(options, ids(options)).value_or(""),
              HasSubstr("member_guard.replicas_to_ack: must be in [0, 1000], got -1"));
  options.member_guard.replicas_to_ack = 1001;
  EXPECT_THAT(check_options(options, ids(options)).value_or(""),
              HasSubstr("member_guard.replicas_to_ack"));
  options.member_guard.replicas_to_ack = 1000;
  EXPECT_EQ(check_options(options, ids(options)), std::nullopt);
}

TEST(Validation, EmptyNodeList) {
  Options options;
  EXPECT_THAT(check_options(options, {}).value_or(""), HasSubstr("node list is empty"));
}

TEST(Validation, DuplicateNodesNameTheNodeAndPositions) {
  auto options = five_nodes();
  auto identities = ids(options);
  identities[3] = identities[1];
  EXPECT_THAT(check_options(options, identities).value_or(""),
              HasSubstr("duplicate node redis://127.0.0.1:7102 (entries 2 and 4)"));
}

TEST(Validation, QuorumOutsideMajorityToN) {
  auto options = five_nodes();
  for (int bad : {1, 2, 6, -1}) {
    options.quorum = bad;
    EXPECT_THAT(check_options(options, ids(options)).value_or(""), HasSubstr("outside [3, 5]"))
        << bad;
  }
  for (int good : {3, 4, 5}) {
    options.quorum = good;
    EXPECT_EQ(check_options(options, ids(options)), std::nullopt) << good;
  }
}

TEST(Validation, DriftAndTimeouts) {
  auto options = five_nodes();
  options.drift_factor = 1.0;
  EXPECT_THAT(check_options(options, ids(options)).value_or(""), HasSubstr("drift_factor"));
  options = five_nodes();
  options.connect_timeout = 0ms;
  EXPECT_THAT(check_options(options, ids(options)).value_or(""), HasSubstr("connect_timeout"));
  options = five_nodes();
  options.reconnect_max = 1ms;
  EXPECT_THAT(check_options(options, ids(options)).value_or(""), HasSubstr("reconnect"));
}

TEST(Validation, Keys) {
  EXPECT_THAT(check_key("", 10).value_or(""), HasSubstr("must not be empty"));
  EXPECT_EQ(check_key("0123456789", 10), std::nullopt);
  EXPECT_THAT(check_key("0123456789a", 10).value_or(""),
              HasSubstr("11 bytes is longer than max_key_bytes (10)"));
  EXPECT_EQ(check_key(std::string("a\0b", 3), 10), std::nullopt);  // binary keys are fine
}

TEST(Validation, TtlMustOutliveTwoNodeTimeouts) {
  EXPECT_THAT(check_ttl(0ms, 0ms).value_or(""), HasSubstr("must be > 0"));
  EXPECT_THAT(check_ttl(-5ms, 0ms).value_or(""), HasSubstr("must be > 0"));
  EXPECT_THAT(check_ttl(100ms, 50ms).value_or(""),
              HasSubstr("longer than 2 x node_timeout (50 ms)"));
  EXPECT_EQ(check_ttl(101ms, 50ms), std::nullopt);
  // Default node timeout: min(50 ms, ttl / 10) -> any ttl above 2 ms passes.
  EXPECT_EQ(check_ttl(10ms, 0ms), std::nullopt);
  EXPECT_EQ(effective_node_timeout(0ms, 10'000ms), 50ms);
  EXPECT_EQ(effective_node_timeout(0ms, 200ms), 20ms);
  EXPECT_EQ(effective_node_timeout(0ms, 5ms), 1ms);
  EXPECT_EQ(effective_node_timeout(7ms, 10'000ms), 7ms);
}

TEST(Validation, LockOptions) {
  LockOptions options;
  options.wait = -1ms;
  EXPECT_THAT(check_lock_options(options, 0ms).value_or(""), HasSubstr("wait: must be >= 0"));
  options = {};
  options.auto_extend = true;
  options.extend_every = options.ttl;
  EXPECT_THAT(check_lock_options(options, 0ms).value_or(""), HasSubstr("extend_every"));
  options = {};
  options.max_attempts = -2;
  EXPECT_THAT(check_lock_options(options, 0ms).value_or(""), HasSubstr("max_attempts"));
}

TEST(LockValue, HexOf128RandomBitsAndUnique) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    auto value = new_lock_value();
    ASSERT_EQ(value.size(), 32u);
    ASSERT_EQ(value.find_first_not_of("0123456789abcdef"), std::string::npos);
    seen.insert(value);
  }
  EXPECT_EQ(seen.size(), 1000u);
}

// Values are drawn from RAND_bytes several at a time. A child forked after its parent made
// one must not make the parent's next value from the bytes it inherited.
TEST(LockValue, AForkedChildNeverRepeatsItsParentsValues) {
  (void)new_lock_value();  // the parent's thread now holds unused bytes
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    const std::string value = new_lock_value();
    const auto written = write(fds[1], value.data(), value.size());
    _exit(written == static_cast<ssize_t>(value.size()) ? 0 : 1);
  }
  close(fds[1]);
  char buffer[32];
  std::size_t got = 0;
  while (got < sizeof buffer) {
    const auto n = read(fds[0], buffer + got, sizeof buffer - got);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_EQ(got, sizeof buffer);
  const std::string in_child(buffer, sizeof buffer);
  std::set<std::string> parents;
  for (int i = 0; i < 40; ++i) parents.insert(new_lock_value());
  EXPECT_EQ(parents.count(in_child), 0u) << "the child made one of its parent's values";
}

// The value is made from the source's bytes, high nibble first.
TEST(LockValue, HexOfTheSourceBytes) {
  auto counting = [](unsigned char* buffer, int size) {
    for (int i = 0; i < size; ++i) buffer[i] = static_cast<unsigned char>(0x10 * i + 0x0f - i);
    return 1;
  };
  EXPECT_EQ(new_lock_value(counting), "0f1e2d3c4b5a69788796a5b4c3d2e1f0");
}

// Every byte value, sixteen values of sixteen bytes each, against snprintf's "%02x".
TEST(LockValue, EveryByteValueIsItsTwoLowerCaseDigits) {
  static thread_local int first = 0;
  auto sequence = [](unsigned char* buffer, int size) {
    for (int i = 0; i < size; ++i) buffer[i] = static_cast<unsigned char>(first + i);
    return 1;
  };
  for (first = 0; first < 256; first += 16) {
    std::string expected;
    for (int byte = first; byte < first + 16; ++byte) {
      char digits[3];
      std::snprintf(digits, sizeof digits, "%02x", byte);
      expected += digits;
    }
    EXPECT_EQ(new_lock_value(sequence), expected);
  }
}

// A source that fails must never yield a value, whatever it left in the buffer: a lock
// value of zeros (or of stack garbage) could be guessed by another client.
TEST(LockValueDeathTest, FailingSourceAbortsInsteadOfReturningAValue) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  auto failing = [](unsigned char* buffer, int size) {
    for (int i = 0; i < size; ++i) buffer[i] = 0;
    return 0;
  };
  EXPECT_DEATH((void)new_lock_value(failing), "RAND_bytes failed");
  unsigned char seed[8];
  EXPECT_DEATH(fill_random(seed, sizeof seed, failing), "no lock value can be made");
}

}  // namespace
}  // namespace redlock::core

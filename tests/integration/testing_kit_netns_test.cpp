// redlock::testing's network namespace mode (FleetOptions::network_namespaces): members in
// namespaces of their own, cut off by the kernel, and a redlock::Client that must still lock
// on a majority, fail clearly without one, and lock again once healed; client hosts with
// views of their own; nothing left behind, also after a SIGKILL. Skipped, saying why
// (ctest's SKIP_REGULAR_EXPRESSION matches "redlock::testing::Unsupported"), where the
// process may not make namespaces.

#include <grp.h>
#include <gtest/gtest.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <redlock/redlock.hpp>
#include <redlock/testing.hpp>

#include "testing/tcp_probe.hpp"

namespace redlock::testing {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr const char* skip_marker = "redlock::testing::Unsupported: ";

// What a shell command printed.
std::string output_of(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return out;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) out += buffer;
  ::pclose(pipe);
  return out;
}

// Whether a namespace or a link of ours named with `prefix` is left.
bool anything_named(const std::string& prefix) {
  return output_of("ip netns list").find(prefix) != std::string::npos ||
         output_of("ip -o link show").find(prefix) != std::string::npos;
}

using detail::connect_error;

// What a child wrote to `fd`, up to its first newline or the end of the pipe.
std::string first_line(int fd) {
  std::string said;
  char buffer[512];
  while (said.find('\n') == std::string::npos) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) break;
    said.append(buffer, static_cast<std::size_t>(n));
  }
  return said.substr(0, said.find('\n'));
}

// A child process that runs `body` with the write end of a pipe and exits with what it
// returns; pid -1 when there is none.
struct Child {
  pid_t pid = -1;
  int said = -1;  ///< the read end
};
Child start_child(const std::function<int(int)>& body) {
  int fds[2];
  if (::pipe(fds) != 0) return {};
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    ::_exit(body(fds[1]));
  }
  ::close(fds[1]);
  if (pid < 0) {
    ::close(fds[0]);
    return {};
  }
  return {pid, fds[0]};
}

// PING on a new connection to address:port, or nullopt when no answer came within 1 s.
std::optional<std::string> ping(const std::string& address, std::uint16_t port) {
  redisContext* context = redisConnectWithTimeout(address.c_str(), port, timeval{1, 0});
  if (context == nullptr || context->err) {
    if (context) redisFree(context);
    return std::nullopt;
  }
  redisSetTimeout(context, timeval{1, 0});
  auto* reply = static_cast<redisReply*>(redisCommand(context, "PING"));
  std::optional<std::string> out;
  if (reply && reply->str) out = reply->str;
  if (reply) freeReplyObject(reply);
  redisFree(context);
  return out;
}

std::shared_ptr<Client> client_of(std::vector<std::string> nodes) {
  Options options;
  options.nodes = std::move(nodes);
  // A silent member costs a round this much; generous, so that a machine of two cores
  // under load, which may leave the whole test unscheduled for a tenth of a second, does
  // not time out the members that answer.
  options.node_timeout = 250ms;
  options.connect_timeout = 500ms;
  options.reconnect_min = 5ms;  // a healed member is reached again within milliseconds
  options.reconnect_max = 50ms;
  return Client::create(options);
}

// Locks and unlocks `key` in one attempt; the error when it cannot.
std::optional<Error> lock_once(Client& client, const std::string& key) {
  auto lock = client.lock(key, {.ttl = 2s});
  if (!lock) return lock.error();
  (void)lock->unlock();
  return std::nullopt;
}

// Five members, two client hosts, one fleet for the tests that only fault it: each test
// leaves it healed.
class NetnsFleet : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    try {
      fleet_ = new Fleet({.masters = 5, .network_namespaces = true, .client_hosts = 2});
    } catch (const Unsupported& e) {
      unsupported_ = e.what();
    }
  }
  static void TearDownTestSuite() {
    delete fleet_;
    fleet_ = nullptr;
  }
  void SetUp() override {
    if (fleet_ == nullptr) GTEST_SKIP() << skip_marker << unsupported_;
  }
  void TearDown() override {
    if (fleet_ != nullptr) fleet_->heal_all();
  }

  static Fleet& fleet() { return *fleet_; }

 private:
  static inline Fleet* fleet_ = nullptr;
  static inline std::string unsupported_;
};

TEST_F(NetnsFleet, MembersAnswerOnAddressesOfTheirOwnNamespaces) {
  const auto urls = fleet().urls();
  const std::string namespaces = output_of("ip netns list");
  for (std::size_t i = 0; i < fleet().size(); ++i) {
    Member& member = fleet()[i];
    EXPECT_EQ(urls[i], "redis://" + member.address() + ":6379");
    EXPECT_EQ(member.url(), member.direct_url());
    EXPECT_EQ(member.proxy_port(), 0);
    EXPECT_NE(member.address().rfind("127.", 0), 0u) << member.address();
    EXPECT_EQ(ping(member.address(), member.port()), "PONG") << "member " << i;
    EXPECT_NE(namespaces.find(fleet().namespace_prefix() + "-m" + std::to_string(i)),
              std::string::npos)
        << namespaces;
    // The server is in a namespace other than ours.
    EXPECT_NE(std::filesystem::read_symlink("/proc/" + std::to_string(member.pid()) + "/ns/net"),
              std::filesystem::read_symlink("/proc/self/ns/net"));
  }
  EXPECT_THROW(fleet()[0].cut(), std::logic_error);  // no proxies in this mode
  EXPECT_THROW(fleet()[0].slow(1ms), std::logic_error);
}

TEST_F(NetnsFleet, ASilentPartitionDropsPacketsAndALockStillSucceedsOnTheMajority) {
  auto client = client_of(fleet().urls());
  ASSERT_EQ(lock_once(*client, "netns:silent:warm"), std::nullopt);
  Member& member = fleet()[0];
  member.partition(Partition::silent);
  EXPECT_TRUE(member.partitioned());
  // Nothing comes back: no refusal, no unreachable error.
  EXPECT_EQ(connect_error(member.address(), member.port(), 300ms), ETIMEDOUT);
  const auto start = Clock::now();
  EXPECT_EQ(lock_once(*client, "netns:silent"), std::nullopt);
  EXPECT_LT(Clock::now() - start, 2s);  // a round of node_timeout, not a hang
  // The fleet still reaches the server past its links.
  member.restart();
  EXPECT_TRUE(member.partitioned());

  member.heal_partition();
  EXPECT_FALSE(member.partitioned());
  EXPECT_EQ(ping(member.address(), member.port()), "PONG");
}

TEST_F(NetnsFleet, AnUnreachablePartitionFailsConnectsAtOnce) {
  auto client = client_of(fleet().urls());
  Member& member = fleet()[1];
  member.partition(Partition::unreachable);
  const auto start = Clock::now();
  EXPECT_EQ(connect_error(member.address(), member.port(), 1s), ENETUNREACH);
  EXPECT_LT(Clock::now() - start, 100ms);
  EXPECT_EQ(lock_once(*client, "netns:unreachable"), std::nullopt);
  member.heal_partition();
  EXPECT_EQ(connect_error(member.address(), member.port(), 1s), 0);
}

TEST_F(NetnsFleet, AMajorityPartitionedFailsClearlyAndHealedItLocksAgain) {
  auto client = client_of(fleet().urls());
  ASSERT_EQ(lock_once(*client, "netns:majority:warm"), std::nullopt);
  fleet()[0].partition(Partition::silent);
  fleet()[1].partition(Partition::silent);
  fleet()[2].partition(Partition::unreachable);
  const auto start = Clock::now();
  const auto error = lock_once(*client, "netns:majority");
  const auto took = Clock::now() - start;
  ASSERT_NE(error, std::nullopt);
  EXPECT_EQ(*error, errc::quorum_unreachable) << error->message();
  EXPECT_FALSE(error->message().empty());
  EXPECT_LT(took, 3s);  // no hang on the silent members: a round of node_timeout

  fleet().heal_all();
  for (std::size_t i = 0; i < fleet().size(); ++i) EXPECT_FALSE(fleet()[i].partitioned());
  EXPECT_TRUE(eventually([&] { return !lock_once(*client, "netns:majority"); }, 5s, 50ms));
}

TEST_F(NetnsFleet, AFlappingLinkCostsNoLock) {
  auto client = client_of(fleet().urls());
  constexpr int flaps = 6;
  std::atomic<bool> done{false};
  Clock::duration verbs{};
  // Member 4's links go down (silent and unreachable in turn) and up again, each for
  // 100 ms, from this thread alone.
  std::thread flapping([&] {
    Member& member = fleet()[4];
    for (int flap = 0; flap < flaps; ++flap) {
      auto start = Clock::now();
      member.partition(flap % 2 == 0 ? Partition::silent : Partition::unreachable);
      verbs += Clock::now() - start;
      std::this_thread::sleep_for(100ms);
      start = Clock::now();
      member.heal_partition();
      verbs += Clock::now() - start;
      std::this_thread::sleep_for(100ms);
    }
    done = true;
  });
  // Four members always answer. A lock that fails anyway is a stall of the loaded
  // machine (every member late at once), which is said but not judged; a link that costs
  // locks would fail many of them.
  int locks = 0;
  int failures = 0;
  while (!done) {
    if (auto error = lock_once(*client, "netns:flapping")) {
      std::printf("a lock failed: %s\n", error->message().c_str());
      ++failures;
    } else {
      ++locks;
    }
  }
  flapping.join();
  std::printf(
      "%d flaps of member 4 (its three links each): partition() and heal_partition() took %lld "
      "ms a flap on average; %d locks meanwhile, %d failed\n",
      flaps,
      static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(verbs).count() /
                             flaps),
      locks, failures);
  EXPECT_GE(locks, flaps);
  EXPECT_LE(failures * 50, locks) << failures << " of " << locks + failures << " failed";
}

TEST_F(NetnsFleet, ClientHostsSeeTheirOwnMajorities) {
  ClientHost& left = fleet().host(0);
  ClientHost& right = fleet().host(1);
  ASSERT_EQ(left.urls().size(), 5u);
  EXPECT_NE(left.urls()[0], fleet().urls()[0]);  // another address of the same member
  EXPECT_NE(left.urls()[0], right.urls()[0]);
  // Split views: left misses {3, 4}, right {0, 1}; both see member 2, the test process all.
  for (std::size_t member : {3, 4}) left.partition(member, Partition::silent);
  for (std::size_t member : {0, 1}) right.partition(member, Partition::unreachable);
  EXPECT_TRUE(left.partitioned(3));
  EXPECT_FALSE(left.partitioned(0));

  std::shared_ptr<Client> left_client;
  std::shared_ptr<Client> right_client;
  {
    // Each client's loop thread is started inside its host, and stays there.
    const auto inside = left.enter();
    left_client = client_of(left.urls());
  }
  {
    const auto inside = right.enter();
    right_client = client_of(right.urls());
  }
  auto held = left_client->lock("netns:split", {.ttl = 5s});
  ASSERT_TRUE(held) << held.error().message();
  // Right's majority {2, 3, 4} overlaps left's in member 2, which refuses it.
  auto refused = right_client->lock("netns:split", {.ttl = 5s});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error(), errc::conflict) << refused.error().message();
  EXPECT_EQ(lock_once(*right_client, "netns:split:other"), std::nullopt);
  EXPECT_TRUE(held->unlock());

  // Inside the host, this thread sees the host's links: ENETUNREACH for member 0.
  const std::string url = right.urls()[0];
  const std::string address = url.substr(8, url.find(':', 8) - 8);  // redis://<address>:6379
  {
    const auto inside = right.enter();
    EXPECT_EQ(connect_error(address, 6379, 1s), ENETUNREACH);
  }
  EXPECT_EQ(connect_error(fleet()[0].address(), 6379, 1s), 0);  // the test process's link
  // So does a program run there: its routes are the host's links, and nothing else.
  const RunResult routes = right.run({"cat", "/proc/net/route"});
  EXPECT_EQ(routes.exit_code, 0);
  EXPECT_NE(routes.output.find("m2"), std::string::npos) << routes.output;
  EXPECT_EQ(routes.output.find("m0"), std::string::npos) << routes.output;  // its address is gone
  EXPECT_EQ(routes.output.find("eth"), std::string::npos) << routes.output;
  EXPECT_EQ(right.run({"sh", "-c", "exit 3"}).exit_code, 3);

  // A member partitioned as a whole is cut from every host too.
  fleet()[2].partition();
  EXPECT_TRUE(left.partitioned(2));
  EXPECT_TRUE(right.partitioned(2));
  left_client.reset();
  right_client.reset();
}

TEST(NetnsFleetLife, EverythingIsRemovedWithTheFleet) {
  std::string prefix;
  std::string block;
  try {
    Fleet fleet({.masters = 2, .network_namespaces = true, .client_hosts = 1});
    prefix = fleet.namespace_prefix();
    ASSERT_FALSE(prefix.empty());
    const std::string address = fleet[0].address();
    block = address.substr(0, address.find('.', address.find('.') + 1)) + ".0.0/16";
    EXPECT_TRUE(anything_named(prefix));
    EXPECT_NE(output_of("ip route show type throw").find(block), std::string::npos);
    fleet[1].partition(Partition::unreachable);  // left as it is
  } catch (const Unsupported& e) {
    GTEST_SKIP() << skip_marker << e.what();
  }
  EXPECT_FALSE(anything_named(prefix)) << output_of("ip netns list") << output_of("ip -o link");
  EXPECT_EQ(output_of("ip route show type throw").find(block), std::string::npos);
}

TEST(NetnsFleetLife, OneMemberAloneWithPersistenceAndAFakeClock) {
  const char* clock = std::getenv("REDLOCK_FAKECLOCK");
  try {
    Fleet fleet({.masters = 1,
                 .persistence = true,
                 .fake_clock = clock != nullptr,
                 .network_namespaces = true});
    Member& member = fleet[0];
    EXPECT_EQ(ping(member.address(), member.port()), "PONG");
    member.partition();
    // The fleet reaches its server past the link: a restart with its data, a clock.
    member.restart({.persistence = true});
    if (clock != nullptr) member.set_clock(1h);
    member.heal_partition();
    EXPECT_EQ(ping(member.address(), member.port()), "PONG");
  } catch (const Unsupported& e) {
    GTEST_SKIP() << skip_marker << e.what();
  }
}

// A child process in a process group of its own makes a fleet and is ended by `signal`,
// sent to its whole group (the fleet's servers too), as an interrupt at a terminal is:
// no destructor runs, and the guardian must remove everything.
void ended_by(int signal) {
  const Child child = start_child([](int out) {
    ::setpgid(0, 0);
    std::string said;
    try {
      Fleet fleet({.masters = 1, .network_namespaces = true, .client_hosts = 1});
      said = "prefix " + fleet.namespace_prefix() + "\n";
      (void)!::write(out, said.data(), said.size());
      for (;;) ::pause();
    } catch (const std::exception& e) {
      said = std::string(dynamic_cast<const Unsupported*>(&e) ? "unsupported " : "error ") +
             e.what() + "\n";
    }
    (void)!::write(out, said.data(), said.size());
    return 1;
  });
  ASSERT_GT(child.pid, 0);
  const std::string said = first_line(child.said);
  ::close(child.said);
  if (said.rfind("prefix ", 0) != 0) {
    ::kill(child.pid, SIGKILL);
    ::waitpid(child.pid, nullptr, 0);
    if (said.rfind("unsupported ", 0) == 0) GTEST_SKIP() << skip_marker << said.substr(12);
    FAIL() << "the child's fleet did not start: " << said;
  }
  const std::string prefix = said.substr(7);
  ASSERT_TRUE(anything_named(prefix));
  ::kill(-child.pid, signal);
  int status = 0;
  ::waitpid(child.pid, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == signal) << status;
  EXPECT_TRUE(eventually([&] { return !anything_named(prefix); }, 5s, 50ms))
      << output_of("ip netns list") << output_of("ip -o link");
}

TEST(NetnsFleetLife, AProcessKilledWithSigkillLeavesNothingBehind) {
  ended_by(SIGKILL);
}

TEST(NetnsFleetLife, AnInterruptedProcessLeavesNothingBehind) {
  ended_by(SIGINT);
}

TEST(NetnsFleetLife, WithoutRootTheFleetThrowsUnsupportedSayingWhy) {
  auto attempt = []() -> std::string {
    try {
      Fleet fleet({.masters = 1, .network_namespaces = true});
    } catch (const Unsupported& e) {
      return e.what();
    }
    return "";
  };
  if (::geteuid() != 0) {
    EXPECT_NE(attempt().find("root"), std::string::npos);
    return;
  }
  // As root, what a user's test sees is tried in a child that gave root up.
  const Child child = start_child([&](int out) {
    if (::setgroups(0, nullptr) != 0 || ::setresgid(65534, 65534, 65534) != 0 ||
        ::setresuid(65534, 65534, 65534) != 0) {
      return 2;
    }
    std::string why;
    try {
      why = attempt();
    } catch (...) {
      return 3;
    }
    why += "\n";
    (void)!::write(out, why.data(), why.size());
    return why.size() == 1 ? 4 : 0;
  });
  ASSERT_GT(child.pid, 0);
  const std::string why = first_line(child.said);
  ::close(child.said);
  int status = 0;
  ::waitpid(child.pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << why;
  EXPECT_NE(why.find("needs root"), std::string::npos) << why;
}

TEST(NetnsFleetLife, SentinelAndClusterMembersAreRefusedBeforeAnythingStarts) {
  EXPECT_THROW(Fleet({.members = {{}, {.kind = MemberKind::sentinel}}, .network_namespaces = true}),
               std::logic_error);
  EXPECT_THROW(Fleet({.masters = 1, .client_hosts = 1}), std::logic_error);
}

TEST(NetnsFleetLife, LoopbackFleetsHaveNoPartitions) {
  Fleet fleet({.masters = 1, .proxies = false});
  EXPECT_EQ(fleet.namespace_prefix(), "");
  EXPECT_EQ(fleet[0].address(), "127.0.0.1");
  EXPECT_FALSE(fleet[0].partitioned());
  EXPECT_THROW(fleet[0].partition(), std::logic_error);
  EXPECT_THROW(fleet.host(0), std::out_of_range);
}

}  // namespace
}  // namespace redlock::testing

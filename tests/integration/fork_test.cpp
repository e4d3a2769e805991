// A Client, its Lock and a FencedStore used in a child process after fork(). The child
// has copies of the parent's sockets and of its loop's epoll descriptor but not its loop
// thread: whatever it did with them would act on the parent's connections (a reply read
// by the child is lost to the parent; an epoll_ctl changes the parent's set). So every
// call in the child must fail at once with a clear error, its async callbacks run with
// that error, and its destructors leave the parent's connections alone, while the parent
// goes on locking and unlocking as if the child did not exist. With callers that lead
// and with callers that hand off. Against five real nodes.

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <redlock/redlock.hpp>

#include "support/lock_nodes_fixture.hpp"

namespace redlock {
namespace {

using namespace std::chrono_literals;

class ForkTest : public test::LockNodesTest, public ::testing::WithParamInterface<SyncCalls> {
 protected:
  static Options options_for_mode() {
    auto opts = options();
    opts.sync_calls = GetParam();
    return opts;
  }
};

// One line per check the child made: "ok <what>" or "FAIL <what>: <why>".
class ChildReport {
 public:
  explicit ChildReport(int fd) : fd_(fd) {}
  void line(const std::string& text) {
    const std::string with_newline = text + "\n";
    (void)::write(fd_, with_newline.data(), with_newline.size());
  }
  // A call the child made must fail with the fork error.
  template <typename T>
  void expect_fork_error(const std::string& what, const Result<T>& result) {
    if (result) return line("FAIL " + what + ": succeeded in the child");
    expect_fork_error(what, result.error());
  }
  void expect_fork_error(const std::string& what, const Error& error) {
    const std::string message = error.message();
    if (error.code() != make_error_code(errc::invalid_argument) ||
        message.find("after fork()") == std::string::npos) {
      return line("FAIL " + what + ": " + message);
    }
    line("ok " + what + ": " + message);
  }

 private:
  int fd_;
};

std::string read_all(int fd) {
  std::string text;
  char buffer[4096];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text;
}

TEST_P(ForkTest, AChildGetsAnErrorAndTheParentGoesOn) {
  auto client = Client::create(options_for_mode());
  auto store = FencedStore::create(storage().url());
  // Connections warm: the child inherits sockets with traffic on them.
  for (int i = 0; i < 3; ++i) {
    auto warm = client->try_lock("fork:parent", 10s);
    ASSERT_TRUE(warm) << warm.error().message();
    ASSERT_TRUE(warm->unlock());
  }
  ASSERT_TRUE(store->read("fork:stored"));
  auto inherited = client->try_lock("fork:inherited", 30s);
  ASSERT_TRUE(inherited) << inherited.error().message();

  int report[2];
  ASSERT_EQ(::pipe(report), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child: no assertion (they would be the child's copy's), only the report and an
    // exit code; a call that hangs is ended by the alarm (SIGALRM kills the child).
    ::close(report[0]);
    ::alarm(5);
    ChildReport out(report[1]);
    out.expect_fork_error("try_lock", client->try_lock("fork:child", 10s));
    LockOptions options;
    options.ttl = 10s;
    options.wait = 1s;
    out.expect_fork_error("lock", client->lock("fork:child", options));
    out.expect_fork_error("status", client->status("fork:child"));
    out.expect_fork_error("extend", inherited->extend(30s));
    out.expect_fork_error("unlock", inherited->unlock());
    int calls = 0;
    bool on_calling_thread = false;
    const auto caller = std::this_thread::get_id();
    client->lock_async("fork:child", options, [&](Result<Lock> result) {
      ++calls;
      on_calling_thread = std::this_thread::get_id() == caller;
      out.expect_fork_error("lock_async", result);
    });
    if (calls != 1 || !on_calling_thread) {
      out.line("FAIL lock_async: its callback ran " + std::to_string(calls) + " times" +
               (on_calling_thread ? "" : ", not on the calling thread, before the call returned"));
    }
    out.expect_fork_error("FencedStore::read", store->read("fork:stored"));
    // The destructors: none may block or touch the parent's connections.
    { Lock gone = std::move(*inherited); }
    store.reset();
    client.reset();
    out.line("ok destructors");
    ::_exit(0);
  }
  ::close(report[1]);

  // The parent: cycles on its own key while the child runs, and a while after.
  int cycles = 0;
  int status = 0;
  bool child_done = false;
  const auto give_up = std::chrono::steady_clock::now() + 20s;
  while ((!child_done || cycles < 100) && std::chrono::steady_clock::now() < give_up) {
    auto held = client->try_lock("fork:parent", 10s);
    ASSERT_TRUE(held) << "cycle " << cycles << ": " << held.error().message();
    auto released = held->unlock();
    ASSERT_TRUE(released) << "cycle " << cycles << ": " << released.error().message();
    ++cycles;
    if (!child_done) child_done = ::waitpid(child, &status, WNOHANG) == child;
  }
  if (!child_done) {
    ::kill(child, SIGKILL);
    ::waitpid(child, &status, 0);
  }
  const std::string lines = read_all(report[0]);
  ::close(report[0]);
  ASSERT_TRUE(child_done) << "the child did not end in 20 s; it reported:\n" << lines;
  ASSERT_FALSE(WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
      << "the child hung (its alarm ended it); it reported:\n"
      << lines;
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
      << "the child ended with status " << status << "; it reported:\n"
      << lines;
  EXPECT_EQ(lines.find("FAIL"), std::string::npos) << lines;
  EXPECT_NE(lines.find("ok destructors"), std::string::npos) << lines;
  EXPECT_NE(lines.find("is used in process"), std::string::npos) << lines;

  // The parent's lock is still its own on every node (the child's unlock sent nothing),
  // and its client, lock and store still work.
  for (std::size_t node = 0; node < cluster().size(); ++node) {
    EXPECT_EQ(get(node, "fork:inherited"), inherited->value()) << "node " << node;
  }
  EXPECT_TRUE(inherited->extend(30s));
  auto released = inherited->unlock();
  EXPECT_TRUE(released) << released.error().message();
  EXPECT_TRUE(gone_everywhere("fork:inherited"));
  auto again = client->try_lock("fork:parent", 10s);
  ASSERT_TRUE(again) << again.error().message();
  EXPECT_TRUE(again->unlock());
  EXPECT_TRUE(store->read("fork:stored"));
}

INSTANTIATE_TEST_SUITE_P(SyncCalls, ForkTest,
                         ::testing::Values(SyncCalls::lead, SyncCalls::hand_off),
                         [](const ::testing::TestParamInfo<SyncCalls>& info) {
                           return info.param == SyncCalls::lead ? "lead" : "hand_off";
                         });

}  // namespace
}  // namespace redlock

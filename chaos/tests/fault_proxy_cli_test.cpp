// redlock-fault-proxy as a child process, driven over stdin and over its control port,
// the way shell scenarios and runners use it.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "raw_client.hpp"
#include "support/redis_server.hpp"

namespace redlock::chaos {
namespace {

using namespace std::chrono_literals;
using test::RawClient;
using test::resp;
using Clock = std::chrono::steady_clock;

const std::string ping = resp({"PING"});
constexpr std::string_view pong = "+PONG\r\n";

// The proxy process with pipes on its stdin and stdout; killed if the test did not stop it.
class ProxyProcess {
 public:
  explicit ProxyProcess(std::vector<std::string> args) {
    args.insert(args.begin(), REDLOCK_FAULT_PROXY_BINARY);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int in[2], out[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0) {
      throw std::runtime_error("pipe");
    }
    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork");
    if (pid_ == 0) {
      ::dup2(in[0], STDIN_FILENO);
      ::dup2(out[1], STDOUT_FILENO);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    ::close(in[0]);
    ::close(out[1]);
    stdin_ = in[1];
    stdout_ = out[0];
  }

  ~ProxyProcess() {
    close_stdin();
    ::close(stdout_);
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }

  void write_line(const std::string& line) {
    const std::string text = line + "\n";
    ASSERT_EQ(::write(stdin_, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }

  // One line of stdout without its newline; "" after 5 s or at EOF.
  std::string read_line() {
    const auto deadline = Clock::now() + 5s;
    while (true) {
      if (auto newline = buffer_.find('\n'); newline != std::string::npos) {
        std::string line = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        return line;
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      pollfd p{stdout_, POLLIN, 0};
      if (left <= 0ms || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return "";
      char chunk[512];
      const ssize_t n = ::read(stdout_, chunk, sizeof chunk);
      if (n <= 0) return "";
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  void terminate() { ::kill(pid_, SIGTERM); }

  void close_stdin() {
    if (stdin_ >= 0) ::close(stdin_);
    stdin_ = -1;
  }

  // The exit status, or -1 if it is still running after 5 s.
  int wait_exit() {
    const auto deadline = Clock::now() + 5s;
    while (Clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(10ms);
    }
    return -1;
  }

 private:
  pid_t pid_ = -1;
  int stdin_ = -1;
  int stdout_ = -1;
  std::string buffer_;
};

std::uint16_t port_after(const std::string& line, const std::string& word) {
  if (line.rfind(word + " ", 0) != 0) throw std::runtime_error("unexpected line: " + line);
  return static_cast<std::uint16_t>(std::stoi(line.substr(word.size() + 1)));
}

TEST(FaultProxyCli, StdinDrivesTheProxyAndItsEndStopsIt) {
  redlock::test::RedisServer server;
  ProxyProcess proxy({"--upstream", "127.0.0.1:" + std::to_string(server.port())});
  const auto port = port_after(proxy.read_line(), "listening");
  RawClient client(port);
  ASSERT_TRUE(client.round_trip(ping, pong));

  proxy.write_line("mode partition");
  EXPECT_EQ(proxy.read_line(), "ok");
  client.send(ping);
  EXPECT_EQ(client.read(1, 300ms).status, RawClient::Status::timeout);

  proxy.write_line("# heal, then slow both ways");
  proxy.write_line("");
  proxy.write_line("mode pass");
  EXPECT_EQ(proxy.read_line(), "ok");
  proxy.write_line("latency both 100ms");
  EXPECT_EQ(proxy.read_line(), "ok");
  // The partition swallowed a request, so that connection is reset; a new one is served.
  const auto lost = client.read(1, 2s).status;
  EXPECT_TRUE(lost == RawClient::Status::reset || lost == RawClient::Status::closed);
  RawClient healed(port);
  const auto start = Clock::now();
  EXPECT_TRUE(healed.round_trip(ping, pong));
  EXPECT_GE(Clock::now() - start, 190ms);

  proxy.write_line("stats");
  const std::string stats = proxy.read_line();
  EXPECT_EQ(stats.rfind("ok mode=pass latency_up=100 latency_down=100 accepted=2 active=1", 0), 0u)
      << stats;
  proxy.write_line("port");
  EXPECT_EQ(proxy.read_line(), "ok " + std::to_string(port));
  proxy.write_line("mode sideways");
  EXPECT_EQ(proxy.read_line().rfind("error ", 0), 0u);

  proxy.write_line("reset");
  EXPECT_EQ(proxy.read_line(), "ok");
  const auto status = healed.read(1, 2s).status;
  EXPECT_TRUE(status == RawClient::Status::reset || status == RawClient::Status::closed);

  proxy.close_stdin();
  EXPECT_EQ(proxy.wait_exit(), 0);
}

TEST(FaultProxyCli, ControlPortDrivesTheProxy) {
  redlock::test::RedisServer server;
  ProxyProcess proxy({"--upstream", "127.0.0.1:" + std::to_string(server.port()), "--no-stdin",
                      "--control-port", "0"});
  const auto port = port_after(proxy.read_line(), "listening");
  const auto control_port = port_after(proxy.read_line(), "control");
  RawClient control(control_port);
  RawClient client(port);

  ASSERT_TRUE(control.round_trip("mode drop_replies\n", "ok\n"));
  client.send(resp({"SET", "k", "v"}));
  EXPECT_EQ(client.read(1, 300ms).status, RawClient::Status::timeout);
  EXPECT_EQ(server.command({"GET", "k"}).str, "v");

  // A second controller works alongside the first.
  RawClient other(control_port);
  ASSERT_TRUE(other.round_trip("mode pass\n", "ok\n"));
  const auto lost = client.read(1, 2s).status;  // its reply was lost: reset, not resumed
  EXPECT_TRUE(lost == RawClient::Status::reset || lost == RawClient::Status::closed);
  RawClient healed(port);
  EXPECT_TRUE(healed.round_trip(ping, pong));

  proxy.close_stdin();  // ignored: the control port keeps it alive
  ASSERT_TRUE(control.round_trip("quit\n", "ok\n"));
  EXPECT_EQ(proxy.wait_exit(), 0);
}

TEST(FaultProxyCli, SigtermClosesConnectionsAndExits) {
  redlock::test::RedisServer server;
  ProxyProcess proxy({"--upstream", "127.0.0.1:" + std::to_string(server.port())});
  const auto port = port_after(proxy.read_line(), "listening");
  RawClient client(port);
  ASSERT_TRUE(client.round_trip(ping, pong));
  proxy.terminate();
  EXPECT_EQ(proxy.wait_exit(), 0);
  EXPECT_EQ(client.read(1, 2s).status, RawClient::Status::closed);
}

TEST(FaultProxyCli, BadUsageExitsWithTwo) {
  ProxyProcess missing({});
  EXPECT_EQ(missing.wait_exit(), 2);
  ProxyProcess bad_port({"--upstream", "127.0.0.1:99999"});
  EXPECT_EQ(bad_port.wait_exit(), 2);
}

}  // namespace
}  // namespace redlock::chaos

#pragma once
// A scripted RESP peer that a Client can use as one of its nodes. The Client runs its
// own loop thread, so the peer gets one too: a FakeRespServer on a private loop, driven
// by a thread that lives as long as this object.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

struct uv_loop_s;

namespace redlock::test {

class FakeRespServer;

class FakeNode {
 public:
  /// What the peer sends back for one complete command (argv as received); an empty
  /// string sends nothing, so the command is never answered.
  using Answer = std::function<std::string(const std::vector<std::string>& argv)>;

  /// Answers every command with `answer`. Starts listening on a free loopback port.
  explicit FakeNode(Answer answer);
  /// Answers the first bytes of every connection with `bytes`, without parsing what was
  /// sent: a server that does not speak RESP at all.
  static std::unique_ptr<FakeNode> speaking(std::string bytes);
  /// Closes every connection and joins the thread.
  ~FakeNode();

  FakeNode(const FakeNode&) = delete;
  FakeNode& operator=(const FakeNode&) = delete;

  std::string url() const;
  /// "127.0.0.1:<port>", as connection errors name the node.
  std::string where() const;

 private:
  struct Raw {};
  FakeNode(Raw, std::string bytes);
  void start();

  struct State;
  std::unique_ptr<State> state_;  // touched only by the thread once it runs
  std::uint16_t port_ = 0;
  std::thread thread_;
};

}  // namespace redlock::test

#pragma once
// A scripted Redis Cluster node for tests of what a real cluster does only in a narrow
// window (a second redirection, a slot map that comes late): each command it receives is
// recorded and answered with the RESP bytes the test's function gives.

#include <hiredis/hiredis.h>
#include <uv.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "support/fake_resp_server.hpp"

namespace redlock::test {

class FakeNode {
 public:
  using Answer = std::function<std::string(const std::vector<std::string>& argv)>;

  FakeNode(uv_loop_t* loop, Answer answer)
      : answer_(std::move(answer)),
        server_(loop, [this](FakeRespServer::Peer& peer, std::string_view bytes) {
          receive(peer, bytes);
        }) {}
  ~FakeNode() {
    for (auto& [peer, reader] : readers_) redisReaderFree(reader);
  }

  std::uint16_t port() const { return server_.port(); }
  std::string address() const { return "127.0.0.1:" + std::to_string(port()); }
  const std::vector<std::vector<std::string>>& received() const { return received_; }

 private:
  void receive(FakeRespServer::Peer& peer, std::string_view bytes) {
    redisReader*& reader = readers_[&peer];
    if (reader == nullptr) reader = redisReaderCreate();
    redisReaderFeed(reader, bytes.data(), bytes.size());
    void* object = nullptr;
    while (redisReaderGetReply(reader, &object) == REDIS_OK && object != nullptr) {
      const auto* command = static_cast<redisReply*>(object);
      std::vector<std::string> argv;
      for (std::size_t i = 0; i < command->elements; ++i) {
        argv.emplace_back(command->element[i]->str, command->element[i]->len);
      }
      freeReplyObject(object);
      object = nullptr;
      received_.push_back(argv);
      peer.send(answer_(argv));
    }
  }

  Answer answer_;
  std::map<FakeRespServer::Peer*, redisReader*> readers_;
  std::vector<std::vector<std::string>> received_;
  FakeRespServer server_;  // last: its handler uses the members above
};

// A node that knows no slot map (CLUSTER fails, so commands go to the first seed) and
// answers GET with `get`.
inline FakeNode::Answer without_map(std::function<std::string()> get) {
  return [get = std::move(get)](const std::vector<std::string>& argv) -> std::string {
    if (argv.at(0) == "CLUSTER") return "-ERR This instance has cluster support disabled\r\n";
    if (argv.at(0) == "ASKING") return "+OK\r\n";
    return get();
  };
}

// Two nodes that send every command to each other (MOVED), as two nodes of a cluster that
// each believe the other owns a slot, for a moment in a failover. `second_settles`, when
// set, is asked first on each of the second node's commands: a non-empty answer replaces
// its redirection.
struct DisagreeingNodes {
  explicit DisagreeingNodes(uv_loop_t* loop, std::function<std::string()> second_settles = {})
      : first(loop, without_map([this] { return moved_to(second); })),
        second(loop, without_map([this, settles = std::move(second_settles)] {
                 std::string settled = settles ? settles() : std::string();
                 return settled.empty() ? moved_to(first) : settled;
               })) {}

  static std::string moved_to(const FakeNode& node) {
    return "-MOVED 7 " + node.address() + "\r\n";
  }

  FakeNode first;
  FakeNode second;
};

}  // namespace redlock::test

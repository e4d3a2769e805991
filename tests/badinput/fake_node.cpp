#include "fake_node.hpp"

#include <hiredis/hiredis.h>
#include <uv.h>

#include <stdexcept>
#include <unordered_map>

#include "support/fake_resp_server.hpp"

namespace redlock::test {

struct FakeNode::State {
  uv_loop_t loop{};
  uv_async_t stop{};
  std::unique_ptr<FakeRespServer> server;
  Answer answer;
  std::string raw;  // used instead of `answer` when it is set
  // One reader per connection, since a command may arrive split over several reads. A
  // closed connection's entry may be reused by a later one at the same address; the
  // client only drops a connection between whole commands, so no half-parsed command is
  // ever inherited.
  std::unordered_map<FakeRespServer::Peer*, redisReader*> readers;

  ~State() {
    for (auto& [peer, reader] : readers) redisReaderFree(reader);
  }

  void on_bytes(FakeRespServer::Peer& peer, std::string_view received) {
    if (!raw.empty()) {
      peer.send(raw);
      return;
    }
    redisReader*& reader = readers[&peer];
    if (reader == nullptr) reader = redisReaderCreate();
    if (redisReaderFeed(reader, received.data(), received.size()) != REDIS_OK) return reset(peer);
    for (;;) {
      void* object = nullptr;
      if (redisReaderGetReply(reader, &object) != REDIS_OK) return reset(peer);
      if (object == nullptr) return;
      auto* command = static_cast<redisReply*>(object);
      std::vector<std::string> argv;
      if (command->type == REDIS_REPLY_ARRAY) {
        for (std::size_t i = 0; i < command->elements; ++i) {
          const redisReply* arg = command->element[i];
          if (arg->str != nullptr) argv.emplace_back(arg->str, arg->len);
        }
      }
      freeReplyObject(command);
      std::string bytes = answer(argv);
      if (!bytes.empty()) peer.send(bytes);
    }
  }

  void reset(FakeRespServer::Peer& peer) {
    redisReaderFree(readers[&peer]);
    readers.erase(&peer);
    peer.close();
  }
};

FakeNode::FakeNode(Answer answer) : state_(std::make_unique<State>()) {
  state_->answer = std::move(answer);
  start();
}

FakeNode::FakeNode(Raw, std::string bytes) : state_(std::make_unique<State>()) {
  if (bytes.empty()) throw std::invalid_argument("FakeNode::speaking needs some bytes");
  state_->raw = std::move(bytes);
  start();
}

std::unique_ptr<FakeNode> FakeNode::speaking(std::string bytes) {
  return std::unique_ptr<FakeNode>(new FakeNode(Raw{}, std::move(bytes)));
}

void FakeNode::start() {
  State* state = state_.get();
  uv_loop_init(&state->loop);
  uv_async_init(&state->loop, &state->stop, [](uv_async_t* async) {
    auto* s = static_cast<State*>(async->data);
    s->server.reset();  // closes the listener and every connection on this loop
    uv_close(reinterpret_cast<uv_handle_t*>(async), nullptr);
  });
  state->stop.data = state;
  // Created before the thread starts, so the loop is not yet running concurrently.
  state->server = std::make_unique<FakeRespServer>(
      &state->loop, [state](FakeRespServer::Peer& peer, std::string_view received) {
        state->on_bytes(peer, received);
      });
  port_ = state->server->port();
  thread_ = std::thread([state] { uv_run(&state->loop, UV_RUN_DEFAULT); });
}

FakeNode::~FakeNode() {
  uv_async_send(&state_->stop);
  thread_.join();
  uv_loop_close(&state_->loop);
}

std::string FakeNode::url() const {
  return "redis://" + where();
}

std::string FakeNode::where() const {
  return "127.0.0.1:" + std::to_string(port_);
}

}  // namespace redlock::test

#include "fake_resp_server.hpp"

#include <netinet/in.h>
#include <uv.h>

#include <list>
#include <stdexcept>

namespace redlock::test {

struct FakeRespServer::State {
  struct Client final : Peer {
    State* owner = nullptr;
    uv_tcp_t tcp{};
    bool closing = false;
    char buffer[16 * 1024];

    void send(std::string_view bytes) override {
      if (closing || bytes.empty()) return;
      // Small scripted replies: one synchronous attempt is enough for the tests, and
      // anything the kernel refuses now would be a broken test, not a partial write.
      uv_buf_t buf =
          uv_buf_init(const_cast<char*>(bytes.data()), static_cast<unsigned>(bytes.size()));
      uv_try_write(reinterpret_cast<uv_stream_t*>(&tcp), &buf, 1);
    }
    void close() override {
      if (closing) return;
      closing = true;
      ++owner->open_handles;
      uv_close(reinterpret_cast<uv_handle_t*>(&tcp), &on_client_closed);
    }
  };

  uv_tcp_t listener{};
  Handler handler;
  std::list<Client> clients;  // stable addresses for libuv
  int accepted = 0;
  int open_handles = 0;  // handles whose close callback is still due
  bool closing = false;

  static void on_client_closed(uv_handle_t* handle) {
    auto* client = static_cast<Client*>(handle->data);
    State* state = client->owner;
    state->clients.remove_if([client](const Client& c) { return &c == client; });
    state->handle_closed();
  }

  void handle_closed() {
    if (--open_handles == 0 && closing) delete this;
  }

  static void on_connection(uv_stream_t* server, int status) {
    auto* state = static_cast<State*>(server->data);
    if (status < 0 || state->closing) return;
    Client& client = state->clients.emplace_back();
    client.owner = state;
    uv_tcp_init(server->loop, &client.tcp);
    client.tcp.data = &client;
    if (uv_accept(server, reinterpret_cast<uv_stream_t*>(&client.tcp)) != 0) {
      client.close();
      return;
    }
    ++state->accepted;
    uv_read_start(
        reinterpret_cast<uv_stream_t*>(&client.tcp),
        [](uv_handle_t* handle, size_t, uv_buf_t* buf) {
          auto* c = static_cast<Client*>(handle->data);
          *buf = uv_buf_init(c->buffer, sizeof c->buffer);
        },
        [](uv_stream_t* stream, ssize_t nread, const uv_buf_t*) {
          auto* c = static_cast<Client*>(stream->data);
          if (c->closing) return;
          if (nread < 0) {
            c->close();
            return;
          }
          if (nread > 0 && c->owner->handler) {
            c->owner->handler(*c, std::string_view(c->buffer, static_cast<size_t>(nread)));
          }
        });
  }

  void close_all() {
    closing = true;
    ++open_handles;
    uv_close(reinterpret_cast<uv_handle_t*>(&listener),
             [](uv_handle_t* handle) { static_cast<State*>(handle->data)->handle_closed(); });
    for (Client& client : clients) client.close();
  }
};

FakeRespServer::FakeRespServer(uv_loop_s* loop, Handler handler) : state_(new State) {
  state_->handler = std::move(handler);
  uv_tcp_init(loop, &state_->listener);
  state_->listener.data = state_;
  sockaddr_in address{};
  uv_ip4_addr("127.0.0.1", 0, &address);
  int status = uv_tcp_bind(&state_->listener, reinterpret_cast<const sockaddr*>(&address), 0);
  if (status == 0) {
    status =
        uv_listen(reinterpret_cast<uv_stream_t*>(&state_->listener), 16, &State::on_connection);
  }
  sockaddr_storage bound{};
  int length = sizeof bound;
  if (status == 0) {
    status = uv_tcp_getsockname(&state_->listener, reinterpret_cast<sockaddr*>(&bound), &length);
  }
  if (status != 0) {
    state_->close_all();
    throw std::runtime_error(std::string("fake RESP server: ") + uv_strerror(status));
  }
  port_ = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
}

FakeRespServer::~FakeRespServer() {
  state_->close_all();
}

int FakeRespServer::accepted() const {
  return state_->accepted;
}

}  // namespace redlock::test

#pragma once
// A scripted TCP peer on the caller's libuv loop, for what a real Redis never does:
// garbage bytes, a connection cut in the middle of a reply, a handshake never answered.
// Listens on a free loopback port.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

struct uv_loop_s;

namespace redlock::test {

class FakeRespServer {
 public:
  /// One accepted connection, valid during the handler call.
  class Peer {
   public:
    virtual void send(std::string_view bytes) = 0;
    /// Closes this connection (after anything already sent).
    virtual void close() = 0;

   protected:
    ~Peer() = default;
  };

  /// Called with every chunk of bytes a peer sends.
  using Handler = std::function<void(Peer& peer, std::string_view received)>;

  /// Starts listening on 127.0.0.1 at a free port. Throws std::runtime_error on failure.
  FakeRespServer(uv_loop_s* loop, Handler handler);
  /// Closes the listener and every connection; the loop must run afterwards so that
  /// libuv can finish closing them (memory is freed then).
  ~FakeRespServer();

  FakeRespServer(const FakeRespServer&) = delete;
  FakeRespServer& operator=(const FakeRespServer&) = delete;

  std::uint16_t port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  /// Connections accepted so far.
  int accepted() const;

 private:
  struct State;
  State* state_;
  std::uint16_t port_ = 0;
};

}  // namespace redlock::test

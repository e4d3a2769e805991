#pragma once
// One client connection through a FaultProxy, paired with its own connection to the
// upstream server. Each direction is a delay line: bytes wait there for the added latency,
// in arrival order, and the current FaultSettings decide whether they are delivered or
// discarded, both when they arrive and when they are due (bytes "in flight" when a
// partition starts are lost, as on a real network).
//
// A connection's end (EOF, a read error, a failed upstream connect) travels through the
// same delay line as the bytes before it, so that it never overtakes them, and it is held
// back while that direction does not flow: a partitioned client does not learn that its
// server closed the connection until the partition heals.
//
// Loop thread only. The connection frees itself once its four handles are closed.

#include <uv.h>

#include <cstdint>
#include <deque>
#include <string>
#include <unordered_set>

#include "proxy/fault_settings.hpp"

namespace redlock::chaos {

class ProxyConnection;

/// What the connections of one proxy share. Owned by the proxy; loop thread only.
struct ProxyContext {
  uv_loop_t* loop = nullptr;
  sockaddr_storage upstream{};
  FaultSettings settings;
  ProxyStats stats;
  /// Connections that are open, i.e. not yet closing.
  std::unordered_set<ProxyConnection*> connections;
};

class ProxyConnection {
 public:
  /// Accepts the pending client on `listener` and starts connecting it upstream. A client
  /// that cannot be accepted is closed at once.
  static void accept(uv_stream_t* listener, ProxyContext& context);

  ProxyConnection(const ProxyConnection&) = delete;
  ProxyConnection& operator=(const ProxyConnection&) = delete;

  /// The context's settings changed: deliver what a fault held back, drop what it now
  /// blocks. Bytes already waiting keep the delay they had when they arrived.
  void settings_changed();
  /// Closes the client side with RST (SO_LINGER 0) and the upstream side normally.
  void reset();
  /// Closes both sides normally.
  void close();

 private:
  struct Chunk {
    std::uint64_t due_ms = 0;  // uv_now() time at which the chunk may be delivered
    std::string bytes;
    bool end = false;    // the source side ended here
    bool reset = false;  // ... abortively (pass an RST on to the client)
  };

  struct DelayLine {
    ProxyConnection* owner = nullptr;
    Direction direction = Direction::up;
    uv_timer_t timer{};
    std::deque<Chunk> queue;
    // Bytes of this direction were discarded by a fault. TCP never delivers a stream with
    // a gap, so such a connection cannot carry on: it is reset once the direction flows
    // again, as a real connection would die of the retransmissions that never got through.
    bool torn = false;
    char buffer[16 * 1024];
  };

  explicit ProxyConnection(ProxyContext& context);
  ~ProxyConnection() = default;

  DelayLine& line(Direction direction) { return lines_[static_cast<int>(direction)]; }
  uv_stream_t* sink(Direction direction);

  void push(DelayLine& line, const char* bytes, std::size_t size);
  void push_end(DelayLine& line, bool reset);
  void pump(DelayLine& line);
  void write(uv_stream_t* sink, std::string bytes);
  void upstream_failed();
  void close_all(bool reset_client);

  static void on_connect(uv_connect_t* request, int status);
  static void on_alloc(uv_handle_t* handle, std::size_t suggested, uv_buf_t* buf);
  static void on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf);
  static void on_timer(uv_timer_t* timer);
  static void on_close(uv_handle_t* handle);

  enum class Upstream { connecting, ready, dead };

  ProxyContext& context_;
  uv_tcp_t client_{};
  uv_tcp_t upstream_{};
  uv_connect_t connect_{};
  DelayLine lines_[2];  // indexed by Direction
  Upstream upstream_state_ = Upstream::connecting;
  bool closing_ = false;
  int open_handles_ = 0;  // freed when the last close callback brings this to 0
};

}  // namespace redlock::chaos

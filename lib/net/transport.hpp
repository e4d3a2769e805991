#pragma once
// The byte stream under a Connection: plain TCP, a unix socket, or TLS over TCP
// (net/tls_transport.hpp: OpenSSL with memory BIOs between the TCP transport and the
// Connection). The Connection does not care which: it only connects, writes bytes and
// hears events.

#include <cstddef>
#include <string>

#include "net/errors.hpp"

struct sockaddr;
struct uv_loop_s;

namespace redlock::net {

/// What a transport tells its owner. Calls come from libuv callbacks, never from inside
/// a Transport method; the owner may close() the transport from any of them.
class TransportSink {
 public:
  virtual void on_transport_connected() = 0;
  virtual void on_transport_data(const char* data, std::size_t size) = 0;
  /// Connecting, reading or writing failed, or the peer closed: the transport is dead
  /// and its owner must close() it.
  virtual void on_transport_error(NetError error) = 0;

 protected:
  ~TransportSink() = default;
};

/// One connection attempt's byte stream. Not reusable: a reconnect makes a new one.
class Transport {
 public:
  /// Starts connecting. A failure that is known at once is returned (a libuv code < 0)
  /// and the sink hears nothing; otherwise the sink hears connected or error.
  virtual int connect() = 0;
  /// Sends all of `bytes` (now, or in order once the socket drains) and leaves `bytes`
  /// empty; its storage may be exchanged with an internal buffer so that neither side
  /// allocates in steady state. Returns 0, or a libuv code < 0 when the stream is broken.
  virtual int write(std::string& bytes) = 0;
  /// The sink hears nothing more; the transport frees itself once libuv closed its
  /// handles (so the loop must keep running). Idempotent.
  virtual void close() = 0;
  /// True while the stream is up but a security handshake is still under way, so that a
  /// connect deadline passing then is reported as the handshake's, not the socket's.
  virtual bool handshaking() const noexcept { return false; }

 protected:
  virtual ~Transport() = default;
};

/// TCP to `address` (sockaddr_in or sockaddr_in6). `where` names the node in errors.
Transport* make_tcp_transport(uv_loop_s* loop, TransportSink& sink, const sockaddr* address,
                              std::string where);

/// A unix domain socket at `path`.
Transport* make_pipe_transport(uv_loop_s* loop, TransportSink& sink, std::string path);

}  // namespace redlock::net

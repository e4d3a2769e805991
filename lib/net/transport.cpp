#include "net/transport.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <uv.h>

#include <cstring>
#include <utility>

#include "net/closing.hpp"

namespace redlock::net {
namespace {

// Large enough that a burst of pipelined replies is read in a few calls; owned by the
// transport so reading never allocates.
constexpr std::size_t read_buffer_size = 64 * 1024;

// Keepalive only detects a dead peer on an idle connection; command deadlines do the
// real work, so a coarse interval is enough.
constexpr unsigned keepalive_seconds = 60;

class StreamTransport final : public Transport {
 public:
  StreamTransport(uv_loop_t* loop, TransportSink& sink, std::string where)
      : loop_(loop), sink_(&sink), where_(std::move(where)) {}

  void set_tcp(const sockaddr* address) {
    is_pipe_ = false;
    std::memcpy(&address_, address,
                address->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in));
    initialized_ = uv_tcp_init(loop_, &handle_.tcp) == 0;
    handle_.handle.data = this;
  }

  void set_pipe(std::string path) {
    is_pipe_ = true;
    path_ = std::move(path);
    initialized_ = uv_pipe_init(loop_, &handle_.pipe, 0) == 0;
    handle_.handle.data = this;
  }

  int connect() override {
    if (!initialized_) return UV_ENOMEM;
    connect_req_.data = this;
    if (is_pipe_) {
      uv_pipe_connect(&connect_req_, &handle_.pipe, path_.c_str(), &on_connect);
      return 0;
    }
    return uv_tcp_connect(&connect_req_, &handle_.tcp, reinterpret_cast<const sockaddr*>(&address_),
                          &on_connect);
  }

  int write(std::string& bytes) override {
    if (closed_) return UV_ECANCELED;
    if (bytes.empty()) return 0;
    if (write_active_) {
      // The socket is still draining an earlier write; these bytes follow it.
      queued_.append(bytes);
      bytes.clear();
      return 0;
    }
    uv_buf_t buffer = uv_buf_init(bytes.data(), static_cast<unsigned>(bytes.size()));
    int written = uv_try_write(&handle_.stream, &buffer, 1);
    if (written == static_cast<int>(bytes.size())) {
      bytes.clear();
      return 0;
    }
    if (written < 0 && written != UV_EAGAIN) return written;
    // The kernel took only part: keep the rest alive in writing_ until libuv wrote it.
    writing_.clear();
    writing_.swap(bytes);
    return start_write(written < 0 ? 0 : static_cast<std::size_t>(written));
  }

  void close() override {
    if (closed_) return;
    closed_ = true;
    sink_ = nullptr;
    if (!initialized_) {
      delete this;  // No handle, so no libuv callback can still reach this object.
      return;
    }
    close_and_free<StreamTransport>(&handle_.handle);
  }

 private:
  ~StreamTransport() override = default;
  template <typename Owner, typename Handle>
  friend void net::close_and_free(Handle* handle);

  int start_write(std::size_t offset) {
    write_active_ = true;
    uv_buf_t buffer =
        uv_buf_init(writing_.data() + offset, static_cast<unsigned>(writing_.size() - offset));
    write_req_.data = this;
    int status = uv_write(&write_req_, &handle_.stream, &buffer, 1, &on_write);
    if (status < 0) write_active_ = false;
    return status;
  }

  static void on_connect(uv_connect_t* request, int status) {
    auto* self = static_cast<StreamTransport*>(request->data);
    if (self->closed_) return;
    if (status < 0) {
      self->sink_->on_transport_error(from_uv("connect", self->where_, status));
      return;
    }
    if (!self->is_pipe_) {
      uv_tcp_nodelay(&self->handle_.tcp, 1);
      uv_tcp_keepalive(&self->handle_.tcp, 1, keepalive_seconds);
    }
    int read_status = uv_read_start(&self->handle_.stream, &on_alloc, &on_read);
    if (read_status < 0) {
      self->sink_->on_transport_error(from_uv("read", self->where_, read_status));
      return;
    }
    self->sink_->on_transport_connected();
  }

  static void on_alloc(uv_handle_t* handle, std::size_t, uv_buf_t* buffer) {
    auto* self = static_cast<StreamTransport*>(handle->data);
    *buffer = uv_buf_init(self->read_buffer_, read_buffer_size);
  }

  static void on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t*) {
    auto* self = static_cast<StreamTransport*>(stream->data);
    if (self->closed_ || nread == 0) return;
    if (nread < 0) {
      uv_read_stop(stream);
      self->sink_->on_transport_error(from_uv("read", self->where_, static_cast<int>(nread)));
      return;
    }
    self->sink_->on_transport_data(self->read_buffer_, static_cast<std::size_t>(nread));
  }

  static void on_write(uv_write_t* request, int status) {
    auto* self = static_cast<StreamTransport*>(request->data);
    self->write_active_ = false;
    if (self->closed_) return;
    if (status < 0) {
      self->sink_->on_transport_error(from_uv("write", self->where_, status));
      return;
    }
    self->writing_.clear();
    if (self->queued_.empty()) return;
    self->writing_.swap(self->queued_);
    int next = self->start_write(0);
    if (next < 0) self->sink_->on_transport_error(from_uv("write", self->where_, next));
  }

  uv_loop_t* loop_;
  TransportSink* sink_;
  std::string where_;
  bool is_pipe_ = false;
  bool initialized_ = false;
  bool closed_ = false;
  bool write_active_ = false;
  union {
    uv_handle_t handle;
    uv_stream_t stream;
    uv_tcp_t tcp;
    uv_pipe_t pipe;
  } handle_{};
  uv_connect_t connect_req_{};
  uv_write_t write_req_{};
  sockaddr_storage address_{};
  std::string path_;
  std::string writing_;  // owned by libuv while write_active_
  std::string queued_;   // bytes submitted while writing_ drains
  char read_buffer_[read_buffer_size];
};

}  // namespace

Transport* make_tcp_transport(uv_loop_t* loop, TransportSink& sink, const sockaddr* address,
                              std::string where) {
  auto* transport = new StreamTransport(loop, sink, std::move(where));
  transport->set_tcp(address);
  return transport;
}

Transport* make_pipe_transport(uv_loop_t* loop, TransportSink& sink, std::string path) {
  auto* transport = new StreamTransport(loop, sink, path);
  transport->set_pipe(std::move(path));
  return transport;
}

}  // namespace redlock::net

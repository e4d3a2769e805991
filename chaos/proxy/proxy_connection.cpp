#include "proxy/proxy_connection.hpp"

#include <algorithm>
#include <utility>

namespace redlock::chaos {
namespace {

struct WriteRequest {
  uv_write_t request{};
  std::string bytes;
};

int index(Direction direction) {
  return static_cast<int>(direction);
}

}  // namespace

ProxyConnection::ProxyConnection(ProxyContext& context) : context_(context) {
  // Every handle is initialised before anything can fail, so that close_all() can always
  // close all four and the connection is freed by the last close callback.
  uv_tcp_init(context_.loop, &client_);
  uv_tcp_init(context_.loop, &upstream_);
  client_.data = this;
  upstream_.data = this;
  connect_.data = this;
  for (Direction direction : {Direction::up, Direction::down}) {
    DelayLine& l = line(direction);
    l.owner = this;
    l.direction = direction;
    uv_timer_init(context_.loop, &l.timer);
    l.timer.data = &l;
  }
  open_handles_ = 4;
}

void ProxyConnection::accept(uv_stream_t* listener, ProxyContext& context) {
  auto* connection = new ProxyConnection(context);
  if (uv_accept(listener, reinterpret_cast<uv_stream_t*>(&connection->client_)) != 0) {
    connection->closing_ = true;  // never counted as open
    for (uv_handle_t* handle : {reinterpret_cast<uv_handle_t*>(&connection->client_),
                                reinterpret_cast<uv_handle_t*>(&connection->upstream_),
                                reinterpret_cast<uv_handle_t*>(&connection->lines_[0].timer),
                                reinterpret_cast<uv_handle_t*>(&connection->lines_[1].timer)}) {
      uv_close(handle, on_close);
    }
    return;
  }
  ++context.stats.accepted;
  ++context.stats.active;
  context.connections.insert(connection);
  // Redis traffic is small request/reply pairs: Nagle would add its own latency.
  uv_tcp_nodelay(&connection->client_, 1);
  uv_read_start(reinterpret_cast<uv_stream_t*>(&connection->client_), on_alloc, on_read);
  const int rc = uv_tcp_connect(&connection->connect_, &connection->upstream_,
                                reinterpret_cast<const sockaddr*>(&context.upstream), on_connect);
  if (rc != 0) connection->upstream_failed();
}

uv_stream_t* ProxyConnection::sink(Direction direction) {
  return direction == Direction::up ? reinterpret_cast<uv_stream_t*>(&upstream_)
                                    : reinterpret_cast<uv_stream_t*>(&client_);
}

void ProxyConnection::settings_changed() {
  pump(line(Direction::up));
  pump(line(Direction::down));
}

void ProxyConnection::reset() {
  close_all(true);
}

void ProxyConnection::close() {
  close_all(false);
}

void ProxyConnection::push(DelayLine& l, const char* bytes, std::size_t size) {
  if (!context_.settings.flows(l.direction)) {
    context_.stats.dropped[index(l.direction)] += size;
    l.torn = true;
    return;
  }
  std::uint64_t due = uv_now(context_.loop);
  if (const auto delay = context_.settings.delay(l.direction); delay.count() > 0) {
    // At least the latency, never a little less: the loop's clock lags behind the bytes'
    // arrival by the callbacks run since it was read and by its whole-millisecond
    // truncation, so it is read afresh and a millisecond is added for the truncation.
    uv_update_time(context_.loop);
    due = uv_now(context_.loop) + static_cast<std::uint64_t>(delay.count()) + 1;
  }
  // A latency lowered while bytes wait must not let new bytes overtake them.
  if (!l.queue.empty()) due = std::max(due, l.queue.back().due_ms);
  l.queue.push_back(Chunk{due, std::string(bytes, size)});
  pump(l);
}

void ProxyConnection::push_end(DelayLine& l, bool reset) {
  std::uint64_t due = uv_now(context_.loop);
  if (!l.queue.empty()) due = std::max(due, l.queue.back().due_ms);
  l.queue.push_back(Chunk{due, {}, true, reset});
  pump(l);
}

void ProxyConnection::pump(DelayLine& l) {
  if (closing_) return;
  uv_timer_stop(&l.timer);
  const int i = index(l.direction);
  if (l.torn && context_.settings.flows(l.direction)) {
    close_all(true);
    return;
  }
  while (!l.queue.empty()) {
    Chunk& head = l.queue.front();
    const bool upstream_dead = l.direction == Direction::up && upstream_state_ == Upstream::dead;
    if (upstream_dead && !head.end) {
      // Nothing can carry these bytes any more; the client learns it through the
      // down line's end.
      context_.stats.dropped[i] += head.bytes.size();
      l.queue.pop_front();
      continue;
    }
    if (l.direction == Direction::up && upstream_state_ == Upstream::connecting) return;
    const std::uint64_t now = uv_now(context_.loop);
    if (head.due_ms > now) {
      uv_timer_start(&l.timer, on_timer, head.due_ms - now, 0);
      return;
    }
    const bool flows = context_.settings.flows(l.direction);
    if (head.end) {
      // Held back until the direction flows again (settings_changed() pumps).
      if (!flows) return;
      // A client that went away takes its upstream connection with it; a server that
      // went away closes the client the way it closed (FIN or RST).
      close_all(l.direction == Direction::down && head.reset);
      return;
    }
    if (flows) {
      context_.stats.forwarded[i] += head.bytes.size();
      write(sink(l.direction), std::move(head.bytes));
    } else {
      context_.stats.dropped[i] += head.bytes.size();
      l.torn = true;
    }
    l.queue.pop_front();
  }
}

void ProxyConnection::write(uv_stream_t* target, std::string bytes) {
  auto* request = new WriteRequest{{}, std::move(bytes)};
  uv_buf_t buf = uv_buf_init(request->bytes.data(), static_cast<unsigned>(request->bytes.size()));
  // The callback frees only the request: it may run (cancelled) while the connection
  // closes, and a failed write shows up again as a read error on the same socket.
  if (uv_write(&request->request, target, &buf, 1,
               [](uv_write_t* req, int) { delete reinterpret_cast<WriteRequest*>(req); }) != 0) {
    delete request;
  }
}

void ProxyConnection::upstream_failed() {
  upstream_state_ = Upstream::dead;
  // A client connecting straight to a dead server would see its connect refused; through
  // the proxy its connect already succeeded, so the nearest thing is an RST.
  push_end(line(Direction::down), true);
  pump(line(Direction::up));
}

void ProxyConnection::close_all(bool reset_client) {
  if (closing_) return;
  closing_ = true;
  context_.connections.erase(this);
  --context_.stats.active;
  for (DelayLine& l : lines_) {
    uv_close(reinterpret_cast<uv_handle_t*>(&l.timer), on_close);
  }
  if (reset_client && uv_tcp_close_reset(&client_, on_close) == 0) {
    ++context_.stats.resets;
  } else {
    uv_close(reinterpret_cast<uv_handle_t*>(&client_), on_close);
  }
  uv_close(reinterpret_cast<uv_handle_t*>(&upstream_), on_close);
}

void ProxyConnection::on_connect(uv_connect_t* request, int status) {
  auto* self = static_cast<ProxyConnection*>(request->data);
  // Cancelled by close_all(): the connection is closing and still allocated (libuv runs
  // this before the upstream handle's close callback).
  if (status == UV_ECANCELED || self->closing_) return;
  if (status < 0) {
    self->upstream_failed();
    return;
  }
  self->upstream_state_ = Upstream::ready;
  uv_tcp_nodelay(&self->upstream_, 1);
  uv_read_start(reinterpret_cast<uv_stream_t*>(&self->upstream_), on_alloc, on_read);
  self->pump(self->line(Direction::up));
}

void ProxyConnection::on_alloc(uv_handle_t* handle, std::size_t, uv_buf_t* buf) {
  auto* self = static_cast<ProxyConnection*>(handle->data);
  // Each line's buffer is consumed (copied) in the read callback that follows at once.
  DelayLine& l = self->line(
      handle == reinterpret_cast<uv_handle_t*>(&self->client_) ? Direction::up : Direction::down);
  *buf = uv_buf_init(l.buffer, sizeof l.buffer);
}

void ProxyConnection::on_read(uv_stream_t* stream, ssize_t nread, const uv_buf_t* buf) {
  auto* self = static_cast<ProxyConnection*>(stream->data);
  if (self->closing_) return;
  DelayLine& l = self->line(
      stream == reinterpret_cast<uv_stream_t*>(&self->client_) ? Direction::up : Direction::down);
  if (nread > 0) {
    self->push(l, buf->base, static_cast<std::size_t>(nread));
  } else if (nread < 0) {
    uv_read_stop(stream);
    if (l.direction == Direction::down) self->upstream_state_ = Upstream::dead;
    self->push_end(l, nread != UV_EOF);
  }
}

void ProxyConnection::on_timer(uv_timer_t* timer) {
  auto* l = static_cast<DelayLine*>(timer->data);
  l->owner->pump(*l);
}

void ProxyConnection::on_close(uv_handle_t* handle) {
  // Timers point at their delay line, sockets at the connection.
  ProxyConnection* self = handle->type == UV_TIMER ? static_cast<DelayLine*>(handle->data)->owner
                                                   : static_cast<ProxyConnection*>(handle->data);
  if (--self->open_handles_ == 0) delete self;
}

}  // namespace redlock::chaos

// The reply path of one lock node, end to end: a real net::Connection (libuv stream,
// hiredis reader, handshake, NOSCRIPT fallback, error classification) under the Redis
// node adapter and the exclusive lock's kind, which read the lock scripts' replies. The
// peer is an in-process unix socket server on the same loop that answers the first bytes
// it receives with the fuzzer's byte stream and then hangs up, so every input ends in a
// bounded number of loop turns without timers having to fire.
//
// Input layout (seeds in corpus/fuzz_node_replies/ are written in it):
//   byte 0: bit 0 the URL carries a password (AUTH first), bit 1 database 3 (SELECT),
//           bit 2 acquire asks for a fencing token, release announces itself,
//           bit 3 acquire asks for the holder's TTL with the attempt (a waiter's)
//   byte 1: operations sent, pipelined: 1 + (byte & 3)
//   bytes 2..: one byte per operation: 0 acquire, 1 release, 2 extend, 3 fence, 4 inspect
//   rest:   what the peer sends back
//
// Promises checked: every operation's callback runs exactly once and never inside the
// call that submitted it; nothing is cancelled before close; success statuses carry no
// error and failures carry a redlock error with a detail; each operation answers only
// with the statuses its contract lists.

#include <uv.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "client/kinds/kind.hpp"
#include "client/operations/operations.hpp"
#include "client/rounds/round.hpp"
#include "member/node.hpp"

namespace {

using namespace std::chrono_literals;
using redlock::NodeStatus;
using redlock::detail::Announce;
using redlock::detail::HolderTtl;
using redlock::detail::NodeReply;

enum class Op { acquire, release, extend, fence, inspect };
constexpr const char* op_names[] = {"acquire", "release", "extend", "fence", "inspect"};

[[noreturn]] void fail(const char* what, Op op, const NodeReply& reply) {
  std::fprintf(stderr, "fuzz_node_replies: %s\n  %s -> %s (%s): %s\n", what,
               op_names[static_cast<int>(op)], redlock::to_string(reply.status),
               reply.error.message().c_str(), reply.detail.c_str());
  std::abort();
}

bool allowed(Op op, NodeStatus status) {
  switch (status) {
    case NodeStatus::granted:
      return op != Op::inspect;
    case NodeStatus::held:
      return op == Op::acquire || op == Op::inspect;
    case NodeStatus::not_held:
      return op != Op::acquire;
    case NodeStatus::timeout:
    case NodeStatus::connection_error:
    case NodeStatus::redis_error:
      return true;
    case NodeStatus::pending:
    case NodeStatus::cancelled:
      return false;
  }
  return false;
}

void check(Op op, const NodeReply& reply) {
  if (!allowed(op, reply.status)) fail("status outside the operation's contract", op, reply);
  const bool success = reply.status == NodeStatus::granted || reply.status == NodeStatus::held ||
                       reply.status == NodeStatus::not_held;
  if (success && reply.error) fail("success with an error", op, reply);
  if (!success) {
    if (!reply.error || reply.error.category() != redlock::category()) {
      fail("failure without a redlock error code", op, reply);
    }
    if (reply.detail.empty()) fail("failure without a detail", op, reply);
  }
}

// The peer side: accepts, waits for the client's first bytes, sends the script, hangs up.
// Later connections (the client reconnecting after the hang-up) are closed at once.
struct Peer {
  uv_pipe_t listener{};
  uv_pipe_t stream{};
  uv_write_t write{};
  bool accepted = false;
  bool answered = false;
  int open_handles = 0;
  std::string answer;
  char buffer[4096];

  static void on_closed(uv_handle_t* handle) { --static_cast<Peer*>(handle->data)->open_handles; }

  void close(uv_handle_t* handle) {
    if (!uv_is_closing(handle)) uv_close(handle, &on_closed);
  }

  static void on_connection(uv_stream_t* server, int status) {
    auto* peer = static_cast<Peer*>(server->data);
    if (status < 0) return;
    if (peer->accepted) {
      // Accept and drop: a reconnect gets an immediate hang-up.
      auto* extra = new uv_pipe_t;
      uv_pipe_init(server->loop, extra, 0);
      (void)uv_accept(server, reinterpret_cast<uv_stream_t*>(extra));
      uv_close(reinterpret_cast<uv_handle_t*>(extra),
               [](uv_handle_t* handle) { delete reinterpret_cast<uv_pipe_t*>(handle); });
      return;
    }
    peer->accepted = true;
    uv_pipe_init(server->loop, &peer->stream, 0);
    peer->stream.data = peer;
    ++peer->open_handles;
    if (uv_accept(server, reinterpret_cast<uv_stream_t*>(&peer->stream)) != 0) {
      peer->close(reinterpret_cast<uv_handle_t*>(&peer->stream));
      return;
    }
    uv_read_start(
        reinterpret_cast<uv_stream_t*>(&peer->stream),
        [](uv_handle_t* handle, size_t, uv_buf_t* buf) {
          auto* p = static_cast<Peer*>(handle->data);
          *buf = uv_buf_init(p->buffer, sizeof p->buffer);
        },
        [](uv_stream_t* stream, ssize_t nread, const uv_buf_t*) {
          auto* p = static_cast<Peer*>(stream->data);
          if (nread < 0) return p->close(reinterpret_cast<uv_handle_t*>(stream));
          if (nread == 0 || p->answered) return;
          p->answered = true;
          if (p->answer.empty()) return p->close(reinterpret_cast<uv_handle_t*>(stream));
          uv_buf_t out = uv_buf_init(p->answer.data(), static_cast<unsigned>(p->answer.size()));
          p->write.data = p;
          int status = uv_write(&p->write, stream, &out, 1, [](uv_write_t* request, int) {
            auto* q = static_cast<Peer*>(request->data);
            q->close(reinterpret_cast<uv_handle_t*>(&q->stream));
          });
          if (status < 0) p->close(reinterpret_cast<uv_handle_t*>(stream));
        });
  }
};

uv_loop_t loop;
std::string socket_path;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  uv_loop_init(&loop);
  char directory[] = "/tmp/redlock-fuzz-XXXXXX";
  if (::mkdtemp(directory) == nullptr) {
    std::perror("mkdtemp");
    std::abort();
  }
  socket_path = std::string(directory) + "/peer.sock";
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const std::uint8_t flags = data[0];
  const std::size_t count = 1 + (data[1] & 3);
  if (size < 2 + count) return 0;
  std::vector<Op> ops;
  for (std::size_t i = 0; i < count; ++i) ops.push_back(static_cast<Op>(data[2 + i] % 5));

  Peer peer;
  peer.answer.assign(reinterpret_cast<const char*>(data + 2 + count), size - 2 - count);
  ::unlink(socket_path.c_str());
  uv_pipe_init(&loop, &peer.listener, 0);
  peer.listener.data = &peer;
  ++peer.open_handles;
  if (uv_pipe_bind(&peer.listener, socket_path.c_str()) != 0 ||
      uv_listen(reinterpret_cast<uv_stream_t*>(&peer.listener), 4, &Peer::on_connection) != 0) {
    std::perror("fake peer");
    std::abort();
  }

  redlock::net::ConnectionOptions options;
  options.endpoint.scheme = redlock::net::Scheme::unix_socket;
  options.endpoint.path = socket_path;
  options.endpoint.display = "unix://" + socket_path;
  if (flags & 1) options.endpoint.password = "pw";
  if (flags & 2) options.endpoint.db = 3;
  options.connect_timeout = 10s;
  options.reconnect_min = 1ms;
  options.reconnect_max = 1ms;
  auto node = redlock::detail::make_redis_node(&loop, options);

  // The exclusive lock's calls, as its kind assembles them.
  const auto lock = redlock::detail::Kind::exclusive("k");
  const redlock::detail::Kind::Attempt attempt(
      "v", 30s, (flags & 4) != 0,
      (flags & 8) != 0 ? HolderTtl::with_attempt : HolderTtl::after_refusal);
  redlock::detail::RoundResult fenced;
  fenced.max_token = 42;
  std::vector<int> calls(count, 0);
  bool submitting = true;
  for (std::size_t i = 0; i < count; ++i) {
    const Op op = ops[i];
    auto done = [&calls, &submitting, i, op](NodeReply reply) {
      if (submitting) fail("callback inside the call", op, reply);
      if (++calls[i] != 1) fail("callback ran twice", op, reply);
      check(op, reply);
    };
    // Long deadlines: a reply path that stalls shows up as a libFuzzer timeout.
    switch (op) {
      case Op::acquire:
        lock.send_acquire(*node, attempt, 10s, done);
        break;
      case Op::release:
        lock.send_release(*node, "v", (flags & 4) != 0 ? Announce::yes : Announce::no, 10s, done);
        break;
      case Op::extend:
        lock.send_extend(*node, "v", 30s, 10s, done);
        break;
      case Op::fence:
        lock.send_write_back(*node, "v", fenced, 10s, done);
        break;
      case Op::inspect:
        redlock::detail::send_status(*node, "k", 10s, done);
        break;
    }
  }
  submitting = false;

  auto all_done = [&] {
    for (int c : calls) {
      if (c == 0) return false;
    }
    return true;
  };
  while (!all_done()) uv_run(&loop, UV_RUN_ONCE);

  node.reset();  // closes the connection; it frees itself once its handles closed
  peer.close(reinterpret_cast<uv_handle_t*>(&peer.listener));
  if (peer.accepted) peer.close(reinterpret_cast<uv_handle_t*>(&peer.stream));
  // Runs until nothing is left open: a handle leaked by the connection would hang here.
  uv_run(&loop, UV_RUN_DEFAULT);
  if (peer.open_handles != 0) {
    std::fprintf(stderr, "fuzz_node_replies: peer handles still open\n");
    std::abort();
  }
  return 0;
}

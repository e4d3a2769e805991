#include "net/connection.hpp"

#include <hiredis/hiredis.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <uv.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <utility>
#include <vector>

#include "net/command_encoder.hpp"
#include "net/errors.hpp"
#include "net/reply_reader.hpp"
#include "net/tls_transport.hpp"
#include "net/transport.hpp"
#include "scripts/script.hpp"

namespace redlock::net {
namespace {

constexpr std::uint64_t ns_per_ms = 1'000'000;
constexpr std::uint64_t no_deadline = std::numeric_limits<std::uint64_t>::max();

// libuv writes with write(2), so a peer that vanished would kill the process with
// SIGPIPE. An application that installed its own disposition keeps it.
void ignore_sigpipe_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction current {};
    if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
      ::signal(SIGPIPE, SIG_IGN);
    }
  });
}

std::uint64_t to_ms_rounded_up(std::uint64_t ns) {
  return (ns + ns_per_ms - 1) / ns_per_ms;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return a > no_deadline - b ? no_deadline : a + b;
}

// A published message arrives unasked on a subscribed connection; every other reply
// answers a command.
bool is_pubsub_message(const redisReply* reply) {
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 3) return false;
  const redisReply* kind = reply->element[0];
  return kind->type == REDIS_REPLY_STRING && std::string_view(kind->str, kind->len) == "message";
}

// A TLS record (an alert or a handshake message, version 3.x) where a RESP reply was
// expected: a plain connection to a TLS port.
bool looks_like_tls_record(const char* data, std::size_t size) {
  return size >= 2 && (data[0] == 0x15 || data[0] == 0x16) && data[1] == 0x03;
}

// A fixed-capacity-free FIFO whose slots are reused, so that an entry's buffers keep
// their capacity from one command to the next.
template <typename T>
class Ring {
 public:
  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  T& operator[](std::size_t i) noexcept { return slots_[(head_ + i) & (slots_.size() - 1)]; }
  T& front() noexcept { return slots_[head_]; }

  T& push_back() {
    if (size_ == slots_.size()) grow();
    T& slot = slots_[(head_ + size_) & (slots_.size() - 1)];
    ++size_;
    return slot;
  }

  void pop_front() noexcept {
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
  }

  // Keeps the first `count` entries and drops the rest (their slots stay for reuse).
  void truncate(std::size_t count) noexcept { size_ = std::min(size_, count); }

 private:
  void grow() {
    std::vector<T> bigger(std::max<std::size_t>(16, slots_.size() * 2));
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = std::move((*this)[i]);
    slots_.swap(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;  // size is zero or a power of two
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace

class ConnectionImpl final : public Connection, private TransportSink {
 public:
  ConnectionImpl(uv_loop_t* loop, ConnectionOptions options)
      : loop_(loop), options_(std::move(options)) {
    const Endpoint& endpoint = options_.endpoint;
    if (endpoint.scheme == Scheme::unix_socket) {
      where_ = endpoint.path;
    } else if (endpoint.host.find(':') != std::string::npos) {
      where_ = "[" + endpoint.host + "]:" + std::to_string(endpoint.port);
    } else {
      where_ = endpoint.host + ":" + std::to_string(endpoint.port);
    }
    backoff_ = options_.reconnect_min;
    rng_.seed(static_cast<std::uint32_t>(uv_hrtime() ^ reinterpret_cast<std::uintptr_t>(this)));
  }

  void start() {
    ignore_sigpipe_once();
    reader_ = create_reply_reader();
    uv_timer_init(loop_, &deadline_timer_);
    uv_timer_init(loop_, &backoff_timer_);
    uv_prepare_init(loop_, &flush_prepare_);
    uv_idle_init(loop_, &deferred_idle_);
    uv_check_init(loop_, &deadline_check_);
    uv_idle_init(loop_, &poll_idle_);
    for (uv_handle_t* handle : handles()) handle->data = this;
    begin_connect();
  }

  void shutdown() {
    if (phase_ == Phase::closed) return;
    phase_ = Phase::closed;
    ++generation_;
    drop_transport();
    uv_timer_stop(&deadline_timer_);
    uv_timer_stop(&backoff_timer_);
    uv_prepare_stop(&flush_prepare_);
    uv_idle_stop(&deferred_idle_);
    uv_check_stop(&deadline_check_);
    uv_idle_stop(&poll_idle_);
    // Failures decided before close() (overloaded, fail-fast) keep their own error and
    // are delivered now; commands that the callbacks below submit are answered only after
    // close() returned, from the last close callback.
    std::vector<Deferred> decided;
    decided.swap(deferred_);
    fail_all(make_error_code(errc::cancelled), where_ + ": connection closed", 0);
    deliver(decided);
    for (uv_handle_t* handle : handles()) uv_close(handle, &on_handle_closed);
  }

  void submit_command(std::span<const std::string_view> argv, std::chrono::milliseconds timeout,
                      ReplyCallback callback) {
    if (argv.empty()) {
      defer(std::move(callback), make_error_code(errc::invalid_argument),
            where_ + ": empty command");
      return;
    }
    if (!admit(callback, timeout)) return;
    const std::size_t begin = out_.size();
    append_command(out_, argv);
    Entry& entry = enqueue(std::move(callback), timeout, out_.size() - begin);
    entry.script = nullptr;
    entry.command.assign(argv[0]);
    entry.script_name = {};
  }

  void submit_eval(const scripts::Script& script, std::span<const std::string_view> keys,
                   std::span<const std::string_view> args, std::chrono::milliseconds timeout,
                   ReplyCallback callback) {
    if (!admit(callback, timeout)) return;
    char numkeys[24];
    const auto numkeys_end = std::to_chars(numkeys, numkeys + sizeof numkeys, keys.size()).ptr;
    const std::size_t argc = 3 + keys.size() + args.size();
    const std::size_t begin = out_.size();
    append_array_header(out_, argc);
    append_bulk(out_, "EVALSHA");
    append_bulk(out_, script.sha1);
    // EVAL differs from EVALSHA only in its first two arguments, so the encoded rest
    // ("numkeys key... arg...") is kept to re-send the script on NOSCRIPT.
    const std::size_t tail = out_.size();
    append_bulk(out_, std::string_view(numkeys, static_cast<std::size_t>(numkeys_end - numkeys)));
    for (std::string_view key : keys) append_bulk(out_, key);
    for (std::string_view arg : args) append_bulk(out_, arg);
    Entry& entry = enqueue(std::move(callback), timeout, out_.size() - begin);
    entry.script = &script;
    entry.command.assign("EVALSHA");
    entry.script_name = script.name;
    entry.argc = argc;
    entry.eval_tail.assign(out_, tail, std::string::npos);
  }

  const Endpoint& endpoint() const noexcept { return options_.endpoint; }

  ConnectionState state() const noexcept {
    switch (phase_) {
      case Phase::resolving:
      case Phase::connecting:
      case Phase::handshaking:
        return ConnectionState::connecting;
      case Phase::ready:
        return ConnectionState::ready;
      case Phase::backoff:
        return ConnectionState::backoff;
      case Phase::closed:
        return ConnectionState::closed;
    }
    return ConnectionState::closed;
  }

  std::size_t pending() const noexcept { return entries_.size(); }
  const ConnectionStats& stats() const noexcept { return stats_; }

 private:
  // resolving, connecting and handshaking are all "connecting" to users; they differ in
  // what the connect deadline interrupts and in which replies are the handshake's.
  enum class Phase { resolving, connecting, handshaking, ready, backoff, closed };
  enum class HandshakeStep { auth, select };

  // A command queued or in flight. Slots are reused (see Ring), so eval_tail keeps its
  // capacity across commands.
  struct Entry {
    ReplyCallback callback;
    std::uint64_t deadline_ns = 0;            // uv_hrtime() clock
    std::uint64_t timeout_ms = 0;             // for the error text only
    std::size_t bytes = 0;                    // encoded length, while the bytes wait in out_
    const scripts::Script* script = nullptr;  // set while a NOSCRIPT fallback is possible
    std::size_t argc = 0;
    std::string eval_tail;
    // What was sent, for the text of an ACL denial, which Redis words without naming the
    // command or key: "EVALSHA"/"EVAL" plus the script's name, or the command's argv[0].
    std::string command;
    std::string_view script_name;  // the Script outlives the command (see eval())
    // Timed out while in flight: the callback already ran, and the reply, when it comes,
    // is discarded. The entry stays so that the replies after it still match in order.
    bool abandoned = false;
  };

  // A command whose deadline passed, taken out of its entry before its callback runs.
  struct Expired {
    ReplyCallback callback;
    std::uint64_t timeout_ms = 0;
    bool sent = false;
  };

  struct Deferred {
    ReplyCallback callback;
    std::error_code error;
    std::string detail;
  };

  // A DNS lookup outlives its connection when abandoned (uv_cancel cannot stop a lookup
  // already running on the thread pool), so it is a separate object that frees itself.
  struct Resolve {
    uv_getaddrinfo_t request{};
    ConnectionImpl* owner = nullptr;
  };

  ~ConnectionImpl() {
    if (reader_) free_reply_reader(reader_);
  }

  std::array<uv_handle_t*, 6> handles() noexcept {
    return {reinterpret_cast<uv_handle_t*>(&deadline_timer_),
            reinterpret_cast<uv_handle_t*>(&backoff_timer_),
            reinterpret_cast<uv_handle_t*>(&flush_prepare_),
            reinterpret_cast<uv_handle_t*>(&deferred_idle_),
            reinterpret_cast<uv_handle_t*>(&deadline_check_),
            reinterpret_cast<uv_handle_t*>(&poll_idle_)};
  }

  static void on_handle_closed(uv_handle_t* handle) {
    auto* self = static_cast<ConnectionImpl*>(handle->data);
    if (++self->closed_handles_ < self->handles().size()) return;
    // Commands submitted after close() (from the callbacks it ran) are answered here, on
    // a later loop phase than the call that submitted them.
    while (!self->deferred_.empty()) self->deliver_deferred();
    delete self;
  }

  // --- submitting -------------------------------------------------------------------

  // Decides whether a command may be queued; if not, its failure is delivered later.
  bool admit(ReplyCallback& callback, std::chrono::milliseconds timeout) {
    if (phase_ == Phase::closed) {
      defer(std::move(callback), make_error_code(errc::cancelled), where_ + ": connection closed");
      return false;
    }
    if (timeout.count() <= 0) {
      defer(std::move(callback), make_error_code(errc::timeout),
            where_ + ": no time left for the command (timeout " + std::to_string(timeout.count()) +
                " ms)");
      return false;
    }
    if (phase_ == Phase::backoff) {
      defer(std::move(callback), last_error_, "not connected, last error: " + last_detail_);
      return false;
    }
    if (options_.max_pending > 0 && entries_.size() >= options_.max_pending) {
      defer(std::move(callback), make_error_code(errc::overloaded),
            where_ + ": " + std::to_string(entries_.size()) +
                " commands already pending (max_pending)");
      return false;
    }
    return true;
  }

  // The command's `length` bytes were just appended to out_ by the caller.
  Entry& enqueue(ReplyCallback callback, std::chrono::milliseconds timeout, std::size_t length) {
    const std::uint64_t deadline = uv_hrtime() + std::uint64_t(timeout.count()) * ns_per_ms;
    if (entries_.empty()) earliest_ns_ = no_deadline;
    Entry& entry = entries_.push_back();
    entry.callback = std::move(callback);
    entry.deadline_ns = deadline;
    entry.timeout_ms = std::uint64_t(timeout.count());
    entry.bytes = length;
    entry.abandoned = false;
    ++stats_.commands;
    if (deadline < earliest_ns_) earliest_ns_ = deadline;
    arm_deadline_timer();
    schedule_flush();
    return entry;
  }

  void defer(ReplyCallback callback, std::error_code error, std::string detail) {
    deferred_.push_back({std::move(callback), error, std::move(detail)});
    // A closing idle handle must not be restarted; on_handle_closed delivers instead.
    if (phase_ != Phase::closed) uv_idle_start(&deferred_idle_, &on_deferred_idle);
  }

  static void on_deferred_idle(uv_idle_t* idle) {
    auto* self = static_cast<ConnectionImpl*>(idle->data);
    self->deliver_deferred();
    if (self->deferred_.empty()) uv_idle_stop(idle);
  }

  // Delivers the failures queued so far. Ones queued by these callbacks wait for the
  // next turn, so a callback that resubmits on failure cannot spin inside one turn.
  void deliver_deferred() {
    std::vector<Deferred> batch;
    batch.swap(deferred_);
    deliver(batch);
    if (deferred_.empty() && deferred_.capacity() < batch.capacity()) deferred_.swap(batch);
  }

  static void deliver(std::vector<Deferred>& batch) {
    for (Deferred& item : batch) {
      ReplyView view{item.error, item.detail, nullptr};
      if (item.callback) item.callback(view);
    }
    batch.clear();
  }

  // --- connecting -------------------------------------------------------------------

  void begin_connect() {
    const Endpoint& endpoint = options_.endpoint;
    if (endpoint.scheme == Scheme::rediss && !tls_context_) {
      // Loaded on the first attempt rather than at create(), so that a missing file is
      // reported like any connect failure and a file that appears later is picked up;
      // and before the connect deadline starts, since reading local files (the system
      // store holds over a hundred CAs) says nothing about the node.
      auto context = tls_context_for(options_.tls, where_);
      if (!context) {
        fail_connection({context.error().code(), context.error().message()});
        return;
      }
      tls_context_ = std::move(*context);
    }
    connect_deadline_ns_ =
        uv_hrtime() + std::uint64_t(options_.connect_timeout.count()) * ns_per_ms;
    arm_deadline_timer();
    if (endpoint.scheme == Scheme::unix_socket) {
      phase_ = Phase::connecting;
      transport_ = make_pipe_transport(loop_, *this, endpoint.path);
      if (int status = transport_->connect(); status < 0) {
        fail_connection(from_uv("connect", where_, status));
      }
      return;
    }
    addresses_.clear();
    next_address_ = 0;
    sockaddr_storage address{};
    // Numeric addresses need no resolver round trip through the thread pool.
    if (uv_ip4_addr(endpoint.host.c_str(), endpoint.port,
                    reinterpret_cast<sockaddr_in*>(&address)) == 0 ||
        uv_ip6_addr(endpoint.host.c_str(), endpoint.port,
                    reinterpret_cast<sockaddr_in6*>(&address)) == 0) {
      addresses_.push_back(address);
      connect_next_address();
      return;
    }
    phase_ = Phase::resolving;
    auto* resolve = new Resolve;
    resolve->owner = this;
    resolve->request.data = resolve;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_protocol = IPPROTO_TCP;
    const std::string port = std::to_string(endpoint.port);
    int status = uv_getaddrinfo(loop_, &resolve->request, &on_resolved, endpoint.host.c_str(),
                                port.c_str(), &hints);
    if (status < 0) {
      delete resolve;
      fail_connection(from_uv("resolve", where_, status));
      return;
    }
    resolve_ = resolve;
  }

  static void on_resolved(uv_getaddrinfo_t* request, int status, addrinfo* result) {
    auto* resolve = static_cast<Resolve*>(request->data);
    ConnectionImpl* self = resolve->owner;
    delete resolve;
    if (self == nullptr) {
      if (result) uv_freeaddrinfo(result);
      return;
    }
    self->resolve_ = nullptr;
    if (status < 0) {
      if (result) uv_freeaddrinfo(result);
      self->fail_connection(from_uv("resolve", self->where_, status));
      return;
    }
    self->addresses_.clear();
    self->next_address_ = 0;
    for (addrinfo* info = result; info != nullptr; info = info->ai_next) {
      if (info->ai_family != AF_INET && info->ai_family != AF_INET6) continue;
      sockaddr_storage address{};
      std::memcpy(&address, info->ai_addr, info->ai_addrlen);
      self->addresses_.push_back(address);
    }
    uv_freeaddrinfo(result);
    if (self->addresses_.empty()) {
      self->fail_connection({make_error_code(errc::connection_error),
                             "resolve " + self->where_ + ": no IPv4 or IPv6 address"});
      return;
    }
    self->connect_next_address();
  }

  void connect_next_address() {
    phase_ = Phase::connecting;
    const auto* address = reinterpret_cast<const sockaddr*>(&addresses_[next_address_++]);
    if (options_.endpoint.scheme == Scheme::rediss) {
      const std::string& name =
          options_.tls.server_name.empty() ? options_.endpoint.host : options_.tls.server_name;
      transport_ = make_tls_transport(loop_, *this, address, where_, tls_context_, name);
    } else {
      transport_ = make_tcp_transport(loop_, *this, address, where_);
    }
    if (int status = transport_->connect(); status < 0) {
      connect_attempt_failed(from_uv("connect", where_, status));
    }
  }

  // A host name may resolve to several addresses ("localhost" to ::1 and 127.0.0.1);
  // each gets a try within the same connect deadline.
  void connect_attempt_failed(NetError error) {
    if (next_address_ < addresses_.size() && uv_hrtime() < connect_deadline_ns_) {
      drop_transport();
      connect_next_address();
      return;
    }
    fail_connection(std::move(error));
  }

  void on_transport_connected() override {
    transport_connected_ = true;
    const Endpoint& endpoint = options_.endpoint;
    std::string handshake;
    handshake_steps_ = 0;
    handshake_done_ = 0;
    if (!endpoint.password.empty()) {
      // Without an ACL user this is AUTH <password>, which every Redis version accepts.
      if (endpoint.username.empty()) {
        const std::array<std::string_view, 2> argv{"AUTH", endpoint.password};
        append_command(handshake, argv);
      } else {
        const std::array<std::string_view, 3> argv{"AUTH", endpoint.username, endpoint.password};
        append_command(handshake, argv);
      }
      handshake_[handshake_steps_++] = HandshakeStep::auth;
    }
    if (endpoint.db != 0) {
      const std::string db = std::to_string(endpoint.db);
      const std::array<std::string_view, 2> argv{"SELECT", db};
      append_command(handshake, argv);
      handshake_[handshake_steps_++] = HandshakeStep::select;
    }
    if (handshake_steps_ == 0) {
      become_ready();
      return;
    }
    // User commands stay in out_ until every handshake reply said OK: a command must
    // never run unauthenticated or on the wrong database.
    phase_ = Phase::handshaking;
    ++stats_.writes;
    if (int status = transport_->write(handshake); status < 0) {
      fail_connection(from_uv("write", where_, status));
    }
  }

  void on_handshake_reply(const redisReply* reply) {
    const HandshakeStep step = handshake_[handshake_done_++];
    const char* name = step == HandshakeStep::auth ? "AUTH" : "SELECT";
    if (reply->type == REDIS_REPLY_ERROR) {
      std::string_view text(reply->str, reply->len);
      std::string detail =
          step == HandshakeStep::auth
              ? "AUTH on " + where_ + " failed: "
              : "SELECT " + std::to_string(options_.endpoint.db) + " on " + where_ + " failed: ";
      detail.append(text);
      fail_connection({step == HandshakeStep::auth ? make_error_code(errc::auth_error)
                                                   : classify_error_reply(text),
                       std::move(detail)});
      return;
    }
    if (reply->type != REDIS_REPLY_STATUS) {
      fail_connection({make_error_code(errc::protocol_error),
                       where_ + ": protocol error: unexpected reply type " +
                           std::to_string(reply->type) + " to " + name});
      return;
    }
    if (handshake_done_ == handshake_steps_) become_ready();
  }

  void become_ready() {
    phase_ = Phase::ready;
    backoff_ = options_.reconnect_min;
    connect_deadline_ns_ = 0;
    ++stats_.connects;
    arm_deadline_timer();
    schedule_flush();
    if (options_.on_ready) options_.on_ready();
  }

  // --- failing ----------------------------------------------------------------------

  void drop_transport() {
    if (transport_) {
      transport_->close();
      transport_ = nullptr;
    }
    if (resolve_) {
      resolve_->owner = nullptr;
      uv_cancel(reinterpret_cast<uv_req_t*>(&resolve_->request));
      resolve_ = nullptr;
    }
    transport_connected_ = false;
  }

  // Drops the connection and fails every command: in flight ones because their replies
  // can no longer come, queued ones because the next connection only comes after a
  // backoff. Commands whose own deadline passed by `expired_at` get errc::timeout; the
  // others get `error`; abandoned ones were answered already.
  void fail_connection(NetError error, std::uint64_t expired_at = 0) {
    if (phase_ == Phase::closed) return;
    ++generation_;
    if (transport_connected_) ++stats_.disconnects;
    drop_transport();
    free_reply_reader(reader_);
    reader_ = create_reply_reader();
    out_.clear();
    written_ = 0;
    connect_deadline_ns_ = 0;
    // A timeout says nothing about the next attempt, so fail-fast reports it as a
    // connection problem; auth and TLS failures keep their code, since retrying will
    // not fix them.
    last_error_ = error.code == make_error_code(errc::timeout)
                      ? make_error_code(errc::connection_error)
                      : error.code;
    last_detail_ = error.detail;
    phase_ = Phase::backoff;
    const auto cap = std::max<std::int64_t>(backoff_.count(), 0);
    std::uniform_int_distribution<std::int64_t> jitter(0, cap);
    uv_timer_start(&backoff_timer_, &on_backoff_timer, std::uint64_t(jitter(rng_)), 0);
    backoff_ =
        std::min(options_.reconnect_max, std::max(backoff_ * 2, std::chrono::milliseconds(1)));
    fail_all(error.code, error.detail, expired_at);
    arm_deadline_timer();
  }

  // Fails every entry in order. Callbacks may submit (the phase is no longer ready or
  // connecting, so those fail on a later turn) or close (which empties the queue).
  void fail_all(std::error_code error, std::string_view detail, std::uint64_t expired_at) {
    written_ = 0;
    out_.clear();
    std::string timeout_detail;
    while (!entries_.empty()) {
      Entry& entry = entries_.front();
      ReplyCallback callback = std::move(entry.callback);
      entry.callback = nullptr;
      const bool expired = entry.deadline_ns <= expired_at;
      if (expired) timeout_detail = no_reply_detail(entry.timeout_ms);
      entries_.pop_front();
      if (!callback) continue;
      if (expired) {
        callback(ReplyView{make_error_code(errc::timeout), timeout_detail, nullptr});
      } else {
        callback(ReplyView{error, detail, nullptr});
      }
    }
  }

  std::string no_reply_detail(std::uint64_t timeout_ms) const {
    return where_ + ": no reply within " + std::to_string(timeout_ms) + " ms";
  }

  static void on_backoff_timer(uv_timer_t* timer) {
    auto* self = static_cast<ConnectionImpl*>(timer->data);
    if (self->phase_ == Phase::backoff) self->begin_connect();
  }

  void on_transport_error(NetError error) override {
    if (phase_ == Phase::connecting) {
      connect_attempt_failed(std::move(error));
      return;
    }
    // hiredis keeps unparsed bytes (or a half-built aggregate) when a reply is cut off.
    // ridx alone is no sign: hiredis 0.14 leaves it at 0 after a GetReply call that
    // found the buffer fully consumed, so only a nested level (ridx > 0) counts.
    if (reader_->ridx > 0 || reader_->pos < reader_->len) {
      error.detail += " in the middle of a reply";
    }
    fail_connection(std::move(error));
  }

  // --- deadlines --------------------------------------------------------------------

  // One timer per connection, armed to the earliest moment an entry needs a look (a live
  // command's deadline, an abandoned one's dead-node bound) or to the connect deadline.
  // Completed commands leave it armed too early at worst; it then fires, finds nothing
  // expired, and re-arms.
  void arm_deadline_timer() {
    if (phase_ == Phase::closed) return;  // the timer is closing
    std::uint64_t due = entries_.empty() ? no_deadline : earliest_ns_;
    if (connect_deadline_ns_ != 0) due = std::min(due, connect_deadline_ns_);
    if (due == no_deadline) {
      if (armed_ns_ != no_deadline) uv_timer_stop(&deadline_timer_);
      armed_ns_ = no_deadline;
      return;
    }
    if (due >= armed_ns_) return;
    const std::uint64_t now = uv_hrtime();
    uv_timer_start(&deadline_timer_, &on_deadline_timer,
                   due > now ? to_ms_rounded_up(due - now) : 0, 0);
    armed_ns_ = due;
  }

  // libuv runs due timers before it polls, so after the loop thread was stalled the
  // timer fires while the replies that arrived meanwhile are still unread. It therefore
  // decides nothing: the check handle does, after one more poll, which the idle handle
  // keeps from blocking. Both run only when a deadline may have passed.
  static void on_deadline_timer(uv_timer_t* timer) {
    auto* self = static_cast<ConnectionImpl*>(timer->data);
    self->armed_ns_ = no_deadline;
    uv_idle_start(&self->poll_idle_, [](uv_idle_t*) {});
    uv_check_start(&self->deadline_check_, &on_deadline_check);
  }

  static void on_deadline_check(uv_check_t* check) {
    auto* self = static_cast<ConnectionImpl*>(check->data);
    uv_check_stop(check);
    uv_idle_stop(&self->poll_idle_);
    self->check_deadlines(uv_hrtime());
  }

  // How long past its deadline an unanswered command makes the node count as dead.
  // Clamped so that no product overflows, whatever the timeout and options.
  std::uint64_t dead_node_ns(std::uint64_t timeout_ms) const {
    constexpr std::uint64_t max_ms = no_deadline / ns_per_ms;
    const std::uint64_t factor = options_.dead_node_factor;
    const std::uint64_t scaled_ms =
        std::min(timeout_ms, max_ms / std::max<std::uint64_t>(factor, 1)) * factor;
    const std::uint64_t min_ms =
        std::uint64_t(std::max<std::int64_t>(options_.dead_node_min.count(), 0));
    return std::min(std::max(min_ms, scaled_ms), max_ms) * ns_per_ms;
  }

  std::uint64_t dead_at(const Entry& entry) const {
    return saturating_add(entry.deadline_ns, dead_node_ns(entry.timeout_ms));
  }

  void check_deadlines(std::uint64_t now) {
    if (connect_deadline_ns_ != 0 && now >= connect_deadline_ns_) {
      const std::string limit = std::to_string(options_.connect_timeout.count()) + " ms";
      std::string detail;
      switch (phase_) {
        case Phase::resolving:
          detail = "resolve " + where_ + ": timed out after " + limit;
          break;
        case Phase::handshaking:
          detail = where_ + ": no reply to AUTH/SELECT within " + limit;
          break;
        default:
          detail = transport_ != nullptr && transport_->handshaking()
                       ? "TLS handshake with " + where_ + ": timed out after " + limit
                       : "connect " + where_ + ": timed out after " + limit;
          break;
      }
      fail_connection({make_error_code(errc::connection_error), std::move(detail)}, now);
      return;
    }
    // Replies come in order, so an unanswered command this late means the node answers
    // nothing at all: only then is the connection worth dropping.
    for (std::size_t i = 0; i < written_; ++i) {
      const Entry& entry = entries_[i];
      if (dead_at(entry) <= now) {
        const std::uint64_t waited_ms = (dead_at(entry) - entry.deadline_ns) / ns_per_ms;
        fail_connection({make_error_code(errc::connection_error),
                         where_ + ": connection dropped: a command got no reply within " +
                             std::to_string(entry.timeout_ms + waited_ms) + " ms"},
                        now);
        return;
      }
    }
    std::vector<Expired> expired;
    abandon_late(now, expired);
    expire_queued(now, expired);
    earliest_ns_ = no_deadline;
    for (std::size_t i = 0; i < entries_.size(); ++i) {
      const Entry& entry = entries_[i];
      earliest_ns_ = std::min(earliest_ns_, entry.abandoned ? dead_at(entry) : entry.deadline_ns);
    }
    arm_deadline_timer();
    if (expired.empty()) return;
    const std::string state = phase_ == Phase::ready ? "" : " (not sent: still connecting)";
    for (Expired& item : expired) {
      if (!item.callback) continue;
      const std::string detail = no_reply_detail(item.timeout_ms) + (item.sent ? "" : state);
      item.callback(ReplyView{make_error_code(errc::timeout), detail, nullptr});
    }
  }

  // Commands in flight that ran out of time fail alone; their entries stay, abandoned,
  // to take their replies when these come.
  void abandon_late(std::uint64_t now, std::vector<Expired>& expired) {
    for (std::size_t i = 0; i < written_; ++i) {
      Entry& entry = entries_[i];
      if (entry.abandoned || entry.deadline_ns > now) continue;
      expired.push_back({std::move(entry.callback), entry.timeout_ms, true});
      entry.callback = nullptr;
      entry.script = nullptr;  // a NOSCRIPT reply is discarded like any other
      entry.abandoned = true;
    }
  }

  // Commands not written yet (waiting for the connection) that ran out of time are
  // removed with their bytes; the connection itself is not at fault.
  void expire_queued(std::uint64_t now, std::vector<Expired>& expired) {
    const std::size_t before = expired.size();
    std::size_t keep = written_;
    std::size_t read_at = 0;
    std::size_t write_at = 0;
    for (std::size_t i = written_; i < entries_.size(); ++i) {
      Entry& entry = entries_[i];
      const std::size_t bytes = entry.bytes;
      if (entry.deadline_ns <= now) {
        expired.push_back({std::move(entry.callback), entry.timeout_ms, false});
        entry.callback = nullptr;
        entry.script = nullptr;
      } else {
        if (write_at != read_at) std::memmove(out_.data() + write_at, out_.data() + read_at, bytes);
        write_at += bytes;
        if (keep != i) std::swap(entries_[keep], entry);
        ++keep;
      }
      read_at += bytes;
    }
    if (expired.size() == before) return;
    out_.resize(write_at);
    entries_.truncate(keep);
  }

  // --- writing and reading ----------------------------------------------------------

  void schedule_flush() {
    if (phase_ == Phase::ready && !out_.empty()) {
      uv_prepare_start(&flush_prepare_, &on_flush_prepare);
    }
  }

  // Runs once per loop turn just before the loop polls: everything submitted during
  // the turn goes out in one write.
  static void on_flush_prepare(uv_prepare_t* prepare) {
    uv_prepare_stop(prepare);
    auto* self = static_cast<ConnectionImpl*>(prepare->data);
    if (self->phase_ != Phase::ready || self->out_.empty()) return;
    self->written_ = self->entries_.size();
    ++self->stats_.writes;
    if (int status = self->transport_->write(self->out_); status < 0) {
      self->fail_connection(from_uv("write", self->where_, status));
    }
  }

  void on_transport_data(const char* data, std::size_t size) override {
    ++stats_.reads;
    const std::uint64_t generation = generation_;
    if (redisReaderFeed(reader_, data, size) != REDIS_OK) {
      fail_connection(from_reader(where_, reader_->errstr));
      return;
    }
    for (;;) {
      void* object = nullptr;
      if (redisReaderGetReply(reader_, &object) != REDIS_OK) {
        const std::string oversized = oversized_reply_error(reader_);
        NetError error = from_reader(where_, oversized.empty() ? reader_->errstr : oversized);
        if (looks_like_tls_record(data, size)) {
          error.detail += " (the server speaks TLS: use a rediss:// URL)";
        }
        fail_connection(std::move(error));
        return;
      }
      if (object == nullptr) return;
      auto* reply = static_cast<redisReply*>(object);
      dispatch(reply);
      freeReplyObject(reply);
      // A callback closed the connection, or a failure dropped it: the rest of the
      // buffer belongs to a connection that no longer exists.
      if (generation != generation_) return;
    }
  }

  void dispatch(const redisReply* reply) {
    if (phase_ == Phase::handshaking) {
      on_handshake_reply(reply);
      return;
    }
    if (options_.on_message && is_pubsub_message(reply)) {
      options_.on_message(reply);
      return;
    }
    if (written_ == 0) {
      fail_connection(from_reader(where_, "unexpected reply with no command in flight"));
      return;
    }
    Entry& entry = entries_.front();
    const bool is_error = reply->type == REDIS_REPLY_ERROR;
    std::string_view text = is_error ? std::string_view(reply->str, reply->len) : "";
    if (is_error && entry.script != nullptr && is_noscript(text)) {
      resend_as_eval();
      return;
    }
    if (entry.abandoned) ++stats_.late_replies;
    ReplyCallback callback = std::move(entry.callback);
    entry.callback = nullptr;
    entry.script = nullptr;
    // ACLs differ from node to node, so a denial says where, and what was denied.
    std::string denied;
    if (is_error && callback && is_permission_error(text)) denied = denial_detail(text, entry);
    entries_.pop_front();
    --written_;
    if (entries_.empty()) arm_deadline_timer();
    if (!callback) return;
    if (!denied.empty()) {
      callback(ReplyView{classify_error_reply(text), denied, reply});
    } else if (is_error && text.empty()) {
      // "-\r\n" gives no reason, yet every error detail must say what happened and where.
      const std::string detail = where_ + ": error reply without text";
      callback(ReplyView{classify_error_reply(text), detail, reply});
    } else if (is_error) {
      callback(ReplyView{classify_error_reply(text), text, reply});
    } else {
      callback(ReplyView{{}, {}, reply});
    }
  }

  // "<Redis' text> (EVALSHA of the acquire script on 127.0.0.1:7101)": Redis' own words
  // first, so that a reader that matches on them still does.
  std::string denial_detail(std::string_view text, const Entry& entry) const {
    std::string detail(text);
    detail.append(" (").append(entry.command);
    if (!entry.script_name.empty()) {
      detail.append(" of the ").append(entry.script_name).append(" script");
    }
    detail.append(" on ").append(where_).append(")");
    return detail;
  }

  // The server lost the script (SCRIPT FLUSH, restart, failover): send its source with
  // EVAL. The retry goes to the back of the pipeline, keeping deadline and callback.
  void resend_as_eval() {
    Entry& old_entry = entries_.front();
    ReplyCallback callback = std::move(old_entry.callback);
    old_entry.callback = nullptr;
    const std::uint64_t deadline = old_entry.deadline_ns;
    const std::uint64_t timeout_ms = old_entry.timeout_ms;
    const scripts::Script* script = old_entry.script;
    const std::size_t argc = old_entry.argc;
    const std::string_view script_name = old_entry.script_name;
    std::string tail;
    tail.swap(old_entry.eval_tail);
    old_entry.script = nullptr;
    entries_.pop_front();
    --written_;

    const std::size_t before = out_.size();
    append_array_header(out_, argc);
    append_bulk(out_, "EVAL");
    append_bulk(out_, script->source);
    out_.append(tail);

    Entry& entry = entries_.push_back();
    entry.callback = std::move(callback);
    entry.deadline_ns = deadline;
    entry.timeout_ms = timeout_ms;
    entry.bytes = out_.size() - before;
    entry.script = nullptr;  // EVAL cannot answer NOSCRIPT
    entry.command.assign("EVAL");
    entry.script_name = script_name;
    entry.argc = argc;
    entry.eval_tail.swap(tail);
    entry.abandoned = false;
    schedule_flush();
  }

  uv_loop_t* loop_;
  ConnectionOptions options_;
  std::string where_;  // host:port or socket path: names the node in every detail
  Phase phase_ = Phase::connecting;

  // Owned handles; closed by shutdown(), and `this` is freed only in the last one's
  // close callback.
  uv_timer_t deadline_timer_{};
  uv_timer_t backoff_timer_{};
  uv_prepare_t flush_prepare_{};
  uv_idle_t deferred_idle_{};
  uv_check_t deadline_check_{};  // decides expiry after the poll (see on_deadline_timer)
  uv_idle_t poll_idle_{};        // keeps that poll from blocking
  std::size_t closed_handles_ = 0;

  Transport* transport_ = nullptr;           // frees itself after close()
  std::shared_ptr<TlsContext> tls_context_;  // rediss:// only; loaded on the first attempt
  bool transport_connected_ = false;
  Resolve* resolve_ = nullptr;  // frees itself in its callback
  std::vector<sockaddr_storage> addresses_;
  std::size_t next_address_ = 0;

  redisReader* reader_ = nullptr;
  std::string out_;               // encoded bytes of entries [written_, size)
  Ring<Entry> entries_;           // in flight first, then queued
  std::size_t written_ = 0;       // entries whose bytes went to the transport
  std::uint64_t generation_ = 0;  // bumped whenever the connection is dropped or closed

  std::uint64_t earliest_ns_ = no_deadline;  // lower bound of when an entry needs a look
  std::uint64_t armed_ns_ = no_deadline;
  std::uint64_t connect_deadline_ns_ = 0;  // 0 when not connecting

  std::array<HandshakeStep, 2> handshake_{};
  std::size_t handshake_steps_ = 0;
  std::size_t handshake_done_ = 0;

  std::chrono::milliseconds backoff_;
  std::minstd_rand rng_;
  std::error_code last_error_;
  std::string last_detail_;

  std::vector<Deferred> deferred_;
  ConnectionStats stats_;
};

namespace {
ConnectionImpl* impl(Connection* connection) {
  return static_cast<ConnectionImpl*>(connection);
}
const ConnectionImpl* impl(const Connection* connection) {
  return static_cast<const ConnectionImpl*>(connection);
}
}  // namespace

Connection* Connection::create(uv_loop_s* loop, ConnectionOptions options) {
  auto* connection = new ConnectionImpl(loop, std::move(options));
  connection->start();
  return connection;
}

void Connection::close() {
  impl(this)->shutdown();
}

void Connection::command(std::span<const std::string_view> argv, std::chrono::milliseconds timeout,
                         ReplyCallback callback) {
  impl(this)->submit_command(argv, timeout, std::move(callback));
}

void Connection::eval(const scripts::Script& script, std::span<const std::string_view> keys,
                      std::span<const std::string_view> args, std::chrono::milliseconds timeout,
                      ReplyCallback callback) {
  impl(this)->submit_eval(script, keys, args, timeout, std::move(callback));
}

const Endpoint& Connection::endpoint() const noexcept {
  return impl(this)->endpoint();
}
ConnectionState Connection::state() const noexcept {
  return impl(this)->state();
}
std::size_t Connection::pending() const noexcept {
  return impl(this)->pending();
}
const ConnectionStats& Connection::stats() const noexcept {
  return impl(this)->stats();
}

}  // namespace redlock::net

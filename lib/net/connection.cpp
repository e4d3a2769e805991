#include "net/connection.hpp"

#include <hiredis/hiredis.h>
#include <netdb.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <uv.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "core/backoff.hpp"
#include "net/cluster_router.hpp"
#include "net/errors.hpp"
#include "net/handshake.hpp"
#include "net/pipeline.hpp"
#include "net/sentinel_resolution.hpp"
#include "net/sentinel_watch.hpp"
#include "net/tls_transport.hpp"
#include "net/transport.hpp"

// The libuv shell around the pipeline (net/pipeline.hpp) and the handshake
// (net/handshake.hpp): it resolves, connects, reconnects after a backoff, moves bytes
// between the transport and the pipeline, arms the timers the pipeline asks for, and runs
// the callbacks the pipeline hands back. Which command a reply answers, when a command
// has timed out and when the node counts as dead are the pipeline's rules.

namespace redlock::net {
namespace {

constexpr std::uint64_t ns_per_ms = 1'000'000;

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

// A published message arrives unasked on a subscribed connection, and so does a cluster
// node's end of the shard subscriptions of a slot it gave away ("sunsubscribe", worded as
// the answer to a SUNSUBSCRIBE: the pipeline tells them apart). Every other reply answers
// a command.
bool is_pubsub_push(const redisReply* reply, const Pipeline& pipeline) {
  if (reply->type != REDIS_REPLY_ARRAY || reply->elements != 3) return false;
  const redisReply* kind = reply->element[0];
  if (kind->type != REDIS_REPLY_STRING) return false;
  const std::string_view word(kind->str, kind->len);
  if (word == "message" || word == "smessage") return true;
  if (word != "sunsubscribe") return false;
  const redisReply* channel = reply->element[1];
  if (channel->type != REDIS_REPLY_STRING) return false;
  return !pipeline.awaits_sunsubscribe(std::string_view(channel->str, channel->len));
}

// A TLS record (an alert or a handshake message, version 3.x) where a RESP reply was
// expected: a plain connection to a TLS port.
bool looks_like_tls_record(const char* data, std::size_t size) {
  return size >= 2 && (data[0] == 0x15 || data[0] == 0x16) && data[1] == 0x03;
}

std::string describe_where(const Endpoint& endpoint) {
  if (endpoint.scheme == Scheme::unix_socket) return endpoint.path;
  if (endpoint.is_sentinel_group()) {
    std::string where = "master '" + endpoint.master_name + "' (sentinels ";
    for (std::size_t i = 0; i < endpoint.sentinels.size(); ++i) {
      if (i > 0) where += ',';
      where += describe_address(endpoint.sentinels[i].host, endpoint.sentinels[i].port);
    }
    return where + ")";
  }
  if (endpoint.host.find(':') != std::string::npos) {
    return "[" + endpoint.host + "]:" + std::to_string(endpoint.port);
  }
  return endpoint.host + ":" + std::to_string(endpoint.port);
}

PipelineOptions pipeline_options(const ConnectionOptions& options) {
  return {describe_where(options.endpoint), options.max_pending, options.dead_node_min,
          options.dead_node_factor};
}

void run_all(std::vector<Completion>& completions) {
  for (Completion& completion : completions) completion.run();
  completions.clear();
}

}  // namespace

class ConnectionImpl final : public Connection, private TransportSink {
 public:
  ConnectionImpl(uv_loop_t* loop, ConnectionOptions options)
      : loop_(loop),
        options_(std::move(options)),
        where_(describe_where(options_.endpoint)),
        pipeline_(pipeline_options(options_)),
        reconnect_backoff_{
            options_.reconnect_min, options_.reconnect_max, core::Jitter::full, {}, {}} {
    if (!options_.random) options_.random = core::system_random();
    if (options_.endpoint.is_sentinel_group()) sentinel_.emplace(options_.endpoint);
  }

  void start() {
    ignore_sigpipe_once();
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
    if (watch_) watch_->stop();
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
    std::vector<Completion> decided;
    decided.swap(deferred_);
    std::vector<Completion> cancelled;
    pipeline_.fail_all(make_error_code(errc::cancelled), where_ + ": connection closed", 0,
                       cancelled);
    run_all(cancelled);
    run_all(decided);
    for (uv_handle_t* handle : handles()) uv_close(handle, &on_handle_closed);
  }

  void submit_command(std::span<const std::string_view> argv, std::chrono::milliseconds timeout,
                      ReplyCallback&& callback, SharedCommand* shared) {
    if (!admit(callback)) return;
    submitted(pipeline_.command(argv, timeout, std::move(callback), timeout_start(shared), shared));
  }

  void submit_eval(const scripts::Script& script, std::span<const std::string_view> keys,
                   std::span<const std::string_view> args, std::chrono::milliseconds timeout,
                   ReplyCallback&& callback, SharedCommand* shared) {
    if (!admit(callback)) return;
    submitted(pipeline_.eval(script, keys, args, timeout, std::move(callback),
                             timeout_start(shared), shared));
  }

  const Endpoint& endpoint() const noexcept { return options_.endpoint; }
  const std::string& where() const noexcept { return where_; }

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

  std::size_t pending() const noexcept { return pipeline_.pending(); }
  std::optional<std::chrono::milliseconds> master_role_age() const noexcept {
    if (!master_since_ns_) return std::nullopt;
    return std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::nanoseconds(uv_hrtime() - *master_since_ns_));
  }
  bool has_unwritten() const noexcept {
    return phase_ != Phase::closed && phase_ != Phase::backoff && pipeline_.has_unsent();
  }

  const ConnectionStats& stats() const noexcept {
    stats_.commands = pipeline_.commands();
    stats_.late_replies = pipeline_.late_replies();
    return stats_;
  }

 private:
  // resolving, connecting and handshaking are all "connecting" to users; they differ in
  // what the connect deadline interrupts and in which replies are the handshake's.
  enum class Phase { resolving, connecting, handshaking, ready, backoff, closed };

  // A DNS lookup outlives its connection when abandoned (uv_cancel cannot stop a lookup
  // already running on the thread pool), so it is a separate object that frees itself.
  struct Resolve {
    uv_getaddrinfo_t request{};
    ConnectionImpl* owner = nullptr;

    // The owner is done with it: the callback, when libuv runs it, only frees it.
    void close() noexcept {
      owner = nullptr;
      uv_cancel(reinterpret_cast<uv_req_t*>(&request));
    }
  };

  ~ConnectionImpl() = default;

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

  // The connection's own reasons to refuse a command; the pipeline has its own.
  // A command's timeout is its node's round trip, counted from when the connection is up.
  // Before the first connection is made (a new client's first commands) it would also
  // have to cover the connect, the handshake (AUTH, TLS) and, for a Sentinel group, the
  // master's resolution: several round trips, and a new client's first lock failed on
  // a healthy but loaded or distant fleet. Such a command's timeout starts at the
  // connect deadline at the latest, and at the connection's readiness when that comes
  // first (become_ready: Pipeline::start_timeouts). Reconnects keep fail-fast: commands
  // meet a connection in backoff with its last error.
  // A command shared by a round's nodes (SharedCommand) takes the time its first node
  // read: they go out within microseconds of each other, and one clock read per round
  // instead of one per node is a few hundred instructions less per lock cycle.
  std::uint64_t timeout_start(SharedCommand* shared) const noexcept {
    std::uint64_t now = 0;
    if (shared == nullptr) {
      now = uv_hrtime();
    } else {
      if (shared->sent_at_ns == 0) shared->sent_at_ns = uv_hrtime();
      now = shared->sent_at_ns;
    }
    if (stats_.connects != 0) return now;
    if (phase_ != Phase::resolving && phase_ != Phase::connecting && phase_ != Phase::handshaking) {
      return now;
    }
    if (connect_deadline_ns_ == 0) {
      return now + std::uint64_t(options_.connect_timeout.count()) * ns_per_ms;
    }
    return std::max(now, connect_deadline_ns_);
  }

  bool admit(ReplyCallback& callback) {
    if (phase_ != Phase::closed && phase_ != Phase::backoff) [[likely]]
      return true;
    return refuse(callback);
  }

  // Only for a command admit() turned away: kept off the path every command takes.
  bool refuse(ReplyCallback& callback) {
    if (phase_ == Phase::closed) {
      defer({std::move(callback),
             make_error_code(errc::cancelled),
             where_ + ": connection closed",
             nullptr,
             {},
             /*unsent=*/true});
      return false;
    }
    if (phase_ == Phase::backoff) {
      defer({std::move(callback),
             last_error_,
             "not connected, last error: " + last_detail_,
             nullptr,
             {},
             /*unsent=*/true});
      return false;
    }
    return true;
  }

  void submitted(std::optional<Completion> refused) {
    if (refused) {
      defer(std::move(*refused));
      return;
    }
    arm_deadline_timer();
    schedule_flush();
  }

  void defer(Completion failure) {
    deferred_.push_back(std::move(failure));
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
    std::vector<Completion> batch;
    batch.swap(deferred_);
    if (options_.on_overloaded) {
      for (const Completion& refused : batch) {
        if (refused.error == errc::overloaded) options_.on_overloaded(refused.detail);
      }
    }
    run_all(batch);
    if (deferred_.empty() && deferred_.capacity() < batch.capacity()) deferred_.swap(batch);
  }

  // --- connecting -------------------------------------------------------------------

  // What is dialled: the node, or for a Sentinel group a sentinel or the master it named.
  const Endpoint& target() const noexcept {
    return sentinel_ ? sentinel_->target() : options_.endpoint;
  }

  void begin_connect() {
    if (sentinel_) {
      // Every connection to a Sentinel group starts with a look-up: after a failure the
      // master may be another server, and asking costs one round trip per reconnect.
      sentinel_->begin();
      where_ = sentinel_->where();
      if (!sentinel_->asking_sentinel()) {
        // The master a +switch-master announced: dialled without asking the sentinels.
        named_master_ = sentinel_->target().host + ":" + std::to_string(sentinel_->target().port);
        master_since_ns_.reset();
      }
    }
    dial();
  }

  void dial() {
    const Endpoint& endpoint = target();
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
      transport_.reset(make_pipe_transport(loop_, *this, endpoint.path));
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
    resolve_.reset(resolve);
  }

  static void on_resolved(uv_getaddrinfo_t* request, int status, addrinfo* result) {
    auto* resolve = static_cast<Resolve*>(request->data);
    ConnectionImpl* self = resolve->owner;
    delete resolve;
    if (self == nullptr) {
      if (result) uv_freeaddrinfo(result);
      return;
    }
    (void)self->resolve_.release();  // this callback frees it
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
    heard_ = false;
    const auto* address = reinterpret_cast<const sockaddr*>(&addresses_[next_address_++]);
    if (target().scheme == Scheme::rediss) {
      const std::string& name =
          options_.tls.server_name.empty() ? target().host : options_.tls.server_name;
      transport_.reset(make_tls_transport(loop_, *this, address, where_, tls_context_, name));
    } else {
      transport_.reset(make_tcp_transport(loop_, *this, address, where_));
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
    std::string handshake;
    Handshake::Goal goal = Handshake::Goal::plain;
    if (sentinel_) {
      goal = sentinel_->asking_sentinel() ? Handshake::Goal::ask_sentinel
                                          : Handshake::Goal::confirm_master;
    }
    if (!handshake_.start(target(), handshake, goal)) {
      become_ready();
      return;
    }
    // User commands stay in the pipeline until every handshake reply said OK: a command
    // must never run unauthenticated or on the wrong database.
    phase_ = Phase::handshaking;
    ++stats_.writes;
    if (int status = transport_->write(handshake); status < 0) {
      fail_connection(from_uv("write", where_, status));
    }
  }

  void on_handshake_reply(const redisReply* reply) {
    NetError error;
    switch (handshake_.on_reply(reply, target(), where_, error)) {
      case Handshake::Outcome::more:
        return;
      case Handshake::Outcome::failed:
        fail_connection(std::move(error));
        return;
      case Handshake::Outcome::done:
        if (sentinel_ && sentinel_->asking_sentinel()) {
          dial_named_master();
          return;
        }
        become_ready();
        return;
    }
  }

  // The sentinel answered: its connection has served its purpose, and the rest of what
  // it sent (nothing, normally) belongs to it.
  void dial_named_master() {
    ++generation_;
    drop_transport();
    pipeline_.discard_unread();
    sentinel_->master_named(handshake_.named_host(), handshake_.named_port());
    master_since_ns_.reset();
    if (const auto age = handshake_.named_role_age()) {
      const std::uint64_t now = uv_hrtime();
      const auto age_ns = std::uint64_t(age->count()) * ns_per_ms;
      master_since_ns_ = now > age_ns ? now - age_ns : 0;
    }
    named_master_ =
        std::string(handshake_.named_host()) + ":" + std::to_string(handshake_.named_port());
    where_ = sentinel_->where();
    dial();
  }

  void watch_switches() {
    if (!watch_) {
      watch_.emplace(loop_, options_,
                     [this](std::string_view payload) { on_switch_master(payload); });
    }
    watch_->watch(sentinel_->naming_endpoint());
  }

  void on_switch_master(std::string_view payload) {
    if (phase_ == Phase::closed || !sentinel_->switch_moves_master(payload)) return;
    sentinel_->follow_switch(payload);
    if (phase_ != Phase::backoff) {
      fail_connection({make_error_code(errc::connection_error),
                       where_ + ": the sentinels moved the master (+switch-master " +
                           std::string(payload) + "): asking the sentinels again"});
    }
    // The backoff grew on failures of the old master (killed, say); the new one gets the
    // first, shortest jittered wait, which still spreads the clients' look-ups.
    if (phase_ == Phase::backoff) {
      failures_ = 0;
      start_backoff_timer(1);
    }
  }

  // A sentinel that cannot be reached or names no master is not the group's failure
  // while another sentinel may still answer: the next one is asked at once, within the
  // same round. True when that happened.
  bool ask_next_sentinel(const NetError& error) {
    if (!sentinel_ || !sentinel_->asking_sentinel() || phase_ == Phase::ready) return false;
    if (!sentinel_->sentinel_failed(error)) return false;
    ++generation_;
    drop_transport();
    // Its answer to SENTINEL MASTER may have come in the same read: not the next one's.
    pipeline_.discard_unread();
    where_ = sentinel_->where();
    dial();
    return true;
  }

  void become_ready() {
    phase_ = Phase::ready;
    failures_ = 0;
    connect_deadline_ns_ = 0;
    ++stats_.connects;
    pipeline_.start_timeouts(uv_hrtime());
    if (sentinel_) {
      pipeline_.set_where(where_);
      watch_switches();
      if (!ready_master_.empty() && ready_master_ != named_master_ && options_.on_master_changed) {
        options_.on_master_changed(where_);
      }
      ready_master_ = named_master_;
    }
    arm_deadline_timer();
    schedule_flush();
    if (options_.on_ready) options_.on_ready();
  }

  // --- failing ----------------------------------------------------------------------

  void drop_transport() {
    transport_.reset();
    resolve_.reset();
    transport_connected_ = false;
  }

  // Drops the connection and fails every command: in flight ones because their replies
  // can no longer come, queued ones because the next connection only comes after a
  // backoff. Commands whose own deadline passed by `expired_at` get errc::timeout; the
  // others get `error`; abandoned ones were answered already.
  void fail_connection(NetError error, std::uint64_t expired_at = 0) {
    if (phase_ == Phase::closed) return;
    if (ask_next_sentinel(error)) return;
    if (sentinel_ && sentinel_->asking_sentinel()) error = sentinel_->exhausted();
    ++generation_;
    if (transport_connected_) ++stats_.disconnects;
    drop_transport();
    connect_deadline_ns_ = 0;
    // A timeout says nothing about the next attempt, so fail-fast reports it as a
    // connection problem; auth and TLS failures keep their code, since retrying will
    // not fix them.
    last_error_ = error.code == make_error_code(errc::timeout)
                      ? make_error_code(errc::connection_error)
                      : error.code;
    last_detail_ = error.detail;
    phase_ = Phase::backoff;
    failures_ = core::next_streak(failures_);
    start_backoff_timer(failures_);
    // Callbacks may submit (the phase is no longer ready or connecting, so those fail on
    // a later turn) or close (the commands taken out here are still answered once each).
    std::vector<Completion> failed;
    if (options_.on_failed) options_.on_failed(error.code, error.detail);
    pipeline_.fail_all(error.code, error.detail, expired_at, failed);
    arm_deadline_timer();
    run_all(failed);
  }

  void start_backoff_timer(int streak) {
    const auto wait = reconnect_backoff_.delay(streak, options_.random());
    uv_timer_start(&backoff_timer_, &on_backoff_timer, static_cast<std::uint64_t>(wait.count()), 0);
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
    if (pipeline_.mid_reply()) error.detail += " in the middle of a reply";
    // A TLS port hangs up on plain text without a word (no alert to recognise), which
    // reads like any other reset.
    const int status = error.uv_status;
    if (!heard_ && target().scheme != Scheme::rediss &&
        (status == UV_EOF || status == UV_ECONNRESET || status == UV_EPIPE)) {
      error.detail += " before any answer (if the port serves TLS, use a rediss URL)";
    }
    fail_connection(std::move(error));
  }

  // --- deadlines --------------------------------------------------------------------

  // One timer per connection, armed to the earliest moment the pipeline needs a look, or
  // to the connect deadline. Completed commands leave it armed too early at worst; it
  // then fires, finds nothing expired, and re-arms.
  void arm_deadline_timer() {
    if (phase_ == Phase::closed) return;  // the timer is closing
    std::uint64_t due = pipeline_.next_deadline();
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

  void check_deadlines(std::uint64_t now) {
    if (connect_deadline_ns_ != 0 && now >= connect_deadline_ns_) {
      const std::string limit = std::to_string(options_.connect_timeout.count()) + " ms";
      std::string detail;
      switch (phase_) {
        case Phase::resolving:
          detail = "resolve " + where_ + ": timed out after " + limit;
          break;
        case Phase::handshaking:
          detail = where_ + ": no reply to " + handshake_commands() + " within " + limit;
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
    std::vector<Completion> expired;
    if (auto dead = pipeline_.expire(now, phase_ != Phase::ready, expired)) {
      fail_connection(std::move(*dead), now);
      return;
    }
    arm_deadline_timer();
    run_all(expired);
  }

  const char* handshake_commands() const noexcept {
    if (!sentinel_) return "AUTH/SELECT";
    return sentinel_->asking_sentinel() ? "SENTINEL GET-MASTER-ADDR-BY-NAME" : "AUTH/SELECT/ROLE";
  }

  // --- writing and reading ----------------------------------------------------------

  void schedule_flush() {
    if (phase_ == Phase::ready && pipeline_.has_unsent()) {
      uv_prepare_start(&flush_prepare_, &on_flush_prepare);
    }
  }

  // Runs once per loop turn just before the loop polls: everything submitted during
  // the turn goes out in one write.
  static void on_flush_prepare(uv_prepare_t* prepare) {
    uv_prepare_stop(prepare);
    auto* self = static_cast<ConnectionImpl*>(prepare->data);
    if (self->phase_ != Phase::ready || !self->pipeline_.has_unsent()) return;
    ++self->stats_.writes;
    if (int status = self->transport_->write(self->pipeline_.take_unsent()); status < 0) {
      self->fail_connection(from_uv("write", self->where_, status));
    }
  }

  void on_transport_data(const char* data, std::size_t size) override {
    ++stats_.reads;
    heard_ = true;
    const std::uint64_t generation = generation_;
    NetError error;
    pipeline_.feed(data, size);
    for (;;) {
      ReplyPtr reply = pipeline_.read(error);
      if (!reply) {
        if (!error.code) return;
        if (looks_like_tls_record(data, size)) {
          error.detail += " (the server speaks TLS: use a rediss:// URL)";
        }
        fail_connection(std::move(error));
        return;
      }
      dispatch(reply.get());
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
    if (options_.on_message && is_pubsub_push(reply, pipeline_)) {
      options_.on_message(reply);
      return;
    }
    Completion completion;
    NetError error;
    if (!pipeline_.match(reply, completion, error)) {
      fail_connection(std::move(error));
      return;
    }
    if (pipeline_.pending() == 0) arm_deadline_timer();
    schedule_flush();  // a NOSCRIPT reply queued the script's EVAL
    if (!completion.reloaded_script.empty() && options_.on_script_reloaded) {
      options_.on_script_reloaded(completion.reloaded_script);
    }
    const bool demoted = sentinel_ && reply->type == REDIS_REPLY_ERROR &&
                         is_not_master_error(std::string_view(reply->str, reply->len));
    const std::uint64_t generation = generation_;
    completion.run();
    // The master of a Sentinel group was demoted (a failover the connection did not see
    // end, or a sentinel that named a replica): reconnecting asks the sentinels again.
    if (demoted && generation == generation_ && phase_ == Phase::ready) {
      fail_connection({make_error_code(errc::connection_error),
                       where_ + " answered " + std::string(reply->str, reply->len) +
                           ": asking the sentinels again"});
    }
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

  ClosingPtr<Transport> transport_;
  std::shared_ptr<TlsContext> tls_context_;  // rediss:// only; loaded on the first attempt
  bool transport_connected_ = false;
  bool heard_ = false;           // a byte arrived on the current transport
  ClosingPtr<Resolve> resolve_;  // frees itself in its callback
  std::vector<sockaddr_storage> addresses_;
  std::size_t next_address_ = 0;

  Pipeline pipeline_;
  Handshake handshake_;
  std::optional<SentinelResolution> sentinel_;
  std::string named_master_;  // host:port the sentinels named last
  // uv_hrtime() when that server became the master, as the sentinel naming it said.
  std::optional<std::uint64_t> master_since_ns_;
  std::string ready_master_;  // host:port this connection was last ready on  // a Sentinel group's
                              // look-up, else empty
  std::optional<SentinelWatch> watch_;  // +switch-master, once a sentinel named a master
  std::uint64_t generation_ = 0;        // bumped whenever the connection is dropped or closed
  std::uint64_t armed_ns_ = no_deadline;
  std::uint64_t connect_deadline_ns_ = 0;  // 0 when not connecting

  core::Backoff reconnect_backoff_;
  int failures_ = 0;  // consecutive failed connections (or attempts) since the last ready
  std::error_code last_error_;
  std::string last_detail_;

  std::vector<Completion> deferred_;
  mutable ConnectionStats stats_;
};

namespace {
ConnectionImpl* impl(Connection* connection) {
  return static_cast<ConnectionImpl*>(connection);
}
const ConnectionImpl* impl(const Connection* connection) {
  return static_cast<const ConnectionImpl*>(connection);
}
ClusterRouter* router(Connection* connection) {
  return static_cast<ClusterRouter*>(connection);
}
const ClusterRouter* router(const Connection* connection) {
  return static_cast<const ClusterRouter*>(connection);
}
}  // namespace

Connection* Connection::create(uv_loop_s* loop, ConnectionOptions options) {
  if (options.endpoint.is_cluster()) {
    auto* cluster = new ClusterRouter(loop, std::move(options));
    cluster->start();
    return cluster;
  }
  auto* connection = new ConnectionImpl(loop, std::move(options));
  connection->start();
  return connection;
}

void Connection::close() {
  if (routes_) return router(this)->shutdown();
  impl(this)->shutdown();
}

void Connection::command(std::span<const std::string_view> argv, std::chrono::milliseconds timeout,
                         ReplyCallback callback, SharedCommand* shared) {
  if (routes_) return router(this)->submit_command(argv, timeout, std::move(callback), shared);
  impl(this)->submit_command(argv, timeout, std::move(callback), shared);
}

void Connection::eval(const scripts::Script& script, std::span<const std::string_view> keys,
                      std::span<const std::string_view> args, std::chrono::milliseconds timeout,
                      ReplyCallback callback, SharedCommand* shared) {
  if (routes_) {
    return router(this)->submit_eval(script, keys, args, timeout, std::move(callback), shared);
  }
  impl(this)->submit_eval(script, keys, args, timeout, std::move(callback), shared);
}

const Endpoint& Connection::endpoint() const noexcept {
  return routes_ ? router(this)->endpoint() : impl(this)->endpoint();
}

const std::string& Connection::where() const noexcept {
  return routes_ ? router(this)->where() : impl(this)->where();
}
ConnectionState Connection::state() const noexcept {
  return routes_ ? router(this)->state() : impl(this)->state();
}
std::size_t Connection::pending() const noexcept {
  return routes_ ? router(this)->pending() : impl(this)->pending();
}
std::optional<std::chrono::milliseconds> Connection::master_role_age() const noexcept {
  return routes_ ? std::nullopt : impl(this)->master_role_age();
}
bool Connection::has_unwritten() const noexcept {
  return routes_ ? router(this)->has_unwritten() : impl(this)->has_unwritten();
}
const ConnectionStats& Connection::stats() const noexcept {
  return routes_ ? router(this)->stats() : impl(this)->stats();
}

}  // namespace redlock::net

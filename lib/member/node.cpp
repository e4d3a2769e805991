#include "member/node.hpp"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "core/backoff.hpp"
#include "member/acquire_reply.hpp"
#include "member/member_kind.hpp"
#include "member/saved_texts.hpp"
#include "net/pipeline.hpp"
#include "net/timer.hpp"
#include "scripts/lock_scripts.hpp"

namespace redlock::detail {

namespace {

// The commands of the round being sent (FanOut), shared by the nodes of this thread: the
// plain acquire's, and the scripts whose Command is the same for every member, by script
// (a round runs few).
struct FanOutCommands {
  net::SharedCommand set;   // SET key value NX PX ttl GET
  net::SharedCommand pttl;  // PTTL key, a waiter's
  struct ByScript {
    const scripts::Script* script = nullptr;
    net::SharedCommand command;
  };
  std::array<ByScript, 4> scripts;
  std::size_t scripts_used = 0;
};

// Kept from round to round, so that the encodings reuse their capacity.
FanOutCommands& fan_out_storage() {
  thread_local FanOutCommands commands;
  return commands;
}

// FanOut brackets open on this thread, and the commands shared while exactly one is: null
// otherwise. Plain values, read per node without the guard a thread_local object needs.
thread_local int fan_out_depth = 0;
thread_local FanOutCommands* fan_out = nullptr;

net::SharedCommand* shared(net::SharedCommand FanOutCommands::*command) noexcept {
  return fan_out != nullptr ? &(fan_out->*command) : nullptr;
}

net::SharedCommand* shared(const Command& command) noexcept {
  if (!command.same_for_every_member || fan_out == nullptr) return nullptr;
  auto& scripts = fan_out->scripts;
  for (std::size_t i = 0; i < fan_out->scripts_used; ++i) {
    if (scripts[i].script == command.script) return &scripts[i].command;
  }
  if (fan_out->scripts_used == scripts.size()) return nullptr;
  auto& added = scripts[fan_out->scripts_used++];
  added.script = command.script;
  added.command.clear();
  return &added.command;
}

class RedisNode final : public Node {
 public:
  RedisNode(uv_loop_s* loop, net::ConnectionOptions options)
      : name_(options.endpoint.display),
        where_(options.endpoint.display),
        loop_(loop),
        probe_timeout_(options.connect_timeout),
        kind_(make_member_kind(options.endpoint, probe_timeout_)) {
    // A release lost with one of the member's servers (a cluster's shard master) goes out
    // again when that server is back, not only when the member's own connection is
    // (on_ready below), which may never have dropped. On the next turn: the kind tells of
    // it from inside the connection's callback.
    kind_->configure(options, [this] {
      if (unsent_releases_.empty()) return;
      if (!retry_timer_) retry_timer_ = net::Timer::create(loop_);
      retry_timer_->start(std::chrono::milliseconds(0), [this] { resend_releases(); });
    });
    // The connection calls this only while it is open, and it is closed before this node
    // goes away (connection_ is the last member).
    // An on_ready already set (the observer's) runs first.
    options.on_ready = [this, observed = std::move(options.on_ready)] {
      if (observed) observed();
      kind_->ready(*connection_);
      reset_waits();
      probe_set_nx_get();
      resend_releases();
    };
    connection_.reset(net::Connection::create(loop, std::move(options)));
  }

  ~RedisNode() override { close(); }

  const std::string& name() const noexcept override { return name_; }
  std::string serving() const override {
    return connection_ ? kind_->serving(*connection_) : std::string();
  }

  std::string fence_key(std::string_view key) const override {
    return kind_->companion_key(key, scripts::fence_suffix);
  }

  std::string companion_key(std::string_view key, std::string_view suffix) const override {
    return kind_->companion_key(key, suffix);
  }

  std::string_view announce_argument(Announce announce) const noexcept override {
    return kind_->announce_argument(announce);
  }

  void run_key_set(std::span<const std::string> keys, const KeySetScript& script,
                   std::chrono::milliseconds timeout, ReplyReader read,
                   NodeCallback done) override {
    kind_->run_key_set(*this, keys, script, timeout, read, std::move(done));
  }

  void watch_start(core::MemberLife::Rules rules) override {
    kind_->watch_start(std::move(rules), connection_.get(), probe_timeout_);
  }

  const core::MemberGuard& guard() const noexcept override { return kind_->guard(); }

  void require_replica_acks(int replicas) override { replicas_to_ack_ = replicas; }

  // A grant of a member of several servers is judged by the guard of the one that gave
  // it (a cluster's shard master); a member of one server needs nothing per reply.
  void attribute(NodeReply& reply, const net::ReplyView& view) const {
    reply.guard = kind_->guard_of(view);
  }

  std::string_view release_channel(std::string_view key) const override {
    return kind_->release_channel(key);
  }

  void run(const Command& command, std::chrono::milliseconds timeout,
           NodeCallback&& done) override {
    if (!connection_) return answer_closed(std::move(done));
    // A call that may grant is followed by its WAIT when replicas must acknowledge it.
    if (replicas_to_ack_ == 0 || !command.may_grant) {
      return send_command(command, timeout, std::move(done));
    }
    ReplicaAcks acks(*this, done, timeout);  // its WAIT goes right behind
    send_command(command, timeout, acks.callback());
  }

  // A release that may not have reached the node (its connection dropped, no reply came,
  // or the node was still loading its data after a restart) is sent again when the
  // connection is back and then every retry interval until the node answers: it is
  // owner-checked and idempotent, and without it the node would keep our entry, and
  // refuse everyone else, for the rest of the key's TTL.
  void release(const Command& command, std::chrono::milliseconds timeout,
               NodeCallback&& done) override {
    send_release(command, timeout, 0, std::move(done));
  }

  bool has_unwritten() const noexcept override {
    return connection_ && connection_->has_unwritten();
  }

  void close() override {
    unsent_releases_.clear();
    retry_timer_.reset();
    connection_.reset();
  }

 private:
  struct AckState {
    NodeCallback done;
    int required = 0;
    std::chrono::steady_clock::time_point deadline;  // the call's
    NodeReply reply;
    bool replied = false;
    bool waited = false;
    int acked = 0;
    std::string wait_failed;  // why no WAIT gave a count
  };

  // With Options::member_guard.replicas_to_ack = R: a call that may grant is covered by a
  // WAIT R written after it on the same connection, with no round trip of its own, and its
  // grant carries how many replicas acknowledged it (core::ReplicaAcks). Anything but a
  // grant is answered at once, without waiting for the WAIT. Construct before the call's
  // command is queued, pass callback() as its callback; the destructor hands the call to
  // the connection's next WAIT (cover_by_wait).
  class ReplicaAcks {
   public:
    // `done` is the caller's and outlives this helper; without a WAIT it is handed on
    // untouched, so the common case costs no move of a std::function of its own.
    ReplicaAcks(RedisNode& node, NodeCallback& done, std::chrono::milliseconds timeout)
        : node_(node), done_(done) {
      if (node.replicas_to_ack_ > 0 && node.connection_) {
        state_ = std::make_shared<AckState>();
        state_->done = std::move(done);
        state_->required = node.replicas_to_ack_;
        state_->deadline = std::chrono::steady_clock::now() + timeout;
      }
    }
    ~ReplicaAcks() {
      if (state_ && node_.connection_) node_.cover_by_wait(std::move(state_));
    }
    ReplicaAcks(const ReplicaAcks&) = delete;
    ReplicaAcks& operator=(const ReplicaAcks&) = delete;

    NodeCallback callback() {
      if (!state_) return std::move(done_);
      return [state = state_](NodeReply&& reply) {
        state->replied = true;
        state->reply = std::move(reply);
        conclude(*state);
      };
    }

   private:
    RedisNode& node_;
    NodeCallback& done_;
    std::shared_ptr<AckState> state_;
  };

  // Redis holds back a connection's later commands while its WAIT waits. WAITs pipelined
  // one per grant would therefore run one after another: with a replica down the k-th
  // would answer after k times its timeout, the lock commands queued behind them would
  // time out, and the connection would be dropped as dead. So at most one WAIT is in
  // flight: grants written meanwhile share the next one, sent when it answers. A WAIT
  // counts the acknowledgements of every write sent on its connection before it, so it
  // measures all of them, and never a grant written after it.
  void cover_by_wait(std::shared_ptr<AckState> state) {
    unwaited_.push_back(std::move(state));
    if (!waiting_) send_wait();
  }

  void send_wait() {
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::shared_ptr<AckState>> covered = std::exchange(unwaited_, {});
    // A call whose deadline passed while the WAIT before was in flight can no longer be
    // measured in time: its grant is not counted, and it does not shorten the others' WAIT.
    std::vector<std::shared_ptr<AckState>> late;
    auto earliest = std::chrono::steady_clock::time_point::max();
    std::erase_if(covered, [&](std::shared_ptr<AckState>& state) {
      if (state->deadline - now < std::chrono::milliseconds(1)) {
        late.push_back(std::move(state));
        return true;
      }
      earliest = std::min(earliest, state->deadline);
      return false;
    });
    if (!covered.empty()) {
      // Every call covered is answered by the earliest deadline among them, and the server
      // gives up at three quarters of it, so that a replica that does not acknowledge is
      // reported as such, not as a node timeout.
      const auto left = std::chrono::ceil<std::chrono::milliseconds>(earliest - now);
      const auto server_wait = std::max<long long>(1, left.count() * 3 / 4);
      const std::string replicas = std::to_string(covered.front()->required);
      const std::string wait_ms = std::to_string(server_wait);
      const std::array<std::string_view, 3> wait{"WAIT", replicas, wait_ms};
      waiting_ = true;
      connection_->command(
          wait, left,
          [this, generation = wait_generation_, covered = std::move(covered)](
              const net::ReplyView& view) { on_wait_reply(generation, covered, view); });
    }
    // Answered last: an answer may start calls, which must find this WAIT in flight.
    for (auto& state : late) {
      state->waited = true;
      state->wait_failed = "the call's deadline passed before a WAIT could follow it";
      conclude(*state);
    }
  }

  void on_wait_reply(std::uint64_t generation,
                     const std::vector<std::shared_ptr<AckState>>& covered,
                     const net::ReplyView& view) {
    for (const auto& state : covered) {
      state->waited = true;
      if (!state->replied) {
        // Replies come in execution order: this WAIT ran before the write (a script
        // re-sent after NOSCRIPT), so its count says nothing of it.
        state->wait_failed = "answered before the write it was to cover";
      } else if (view.error) {
        state->wait_failed = failed_call(view).detail;
      } else if (view.reply->type == REDIS_REPLY_INTEGER) {
        state->acked = static_cast<int>(view.reply->integer);
      } else {
        state->wait_failed = "unexpected reply " + describe_reply(view.reply);
      }
      conclude(*state);
    }
    // A WAIT of a connection since replaced (reset_waits) no longer holds the next one back.
    if (generation != wait_generation_) return;
    waiting_ = false;
    if (!unwaited_.empty() && connection_) send_wait();
  }

  // A new connection: no WAIT of ours blocks it yet. One still due from the old connection
  // (its callback runs once that failure reaches it) must not hold back the WAIT of the
  // grants written on this one; at worst two are in flight for a moment.
  void reset_waits() {
    ++wait_generation_;
    waiting_ = false;
    if (!unwaited_.empty()) send_wait();
  }

  static void conclude(AckState& state) {
    if (!state.done || !state.replied) return;
    if (state.reply.status == NodeStatus::granted) {
      if (!state.waited) return;
      state.reply.acks = {state.required, state.acked};
      if (!core::acked_enough(state.reply.acks)) {
        state.reply.detail =
            "not counted: WAIT " + std::to_string(state.required) +
            (state.wait_failed.empty()
                 ? " acknowledged by " + std::to_string(state.acked) + " replica(s)"
                 : " failed: " + state.wait_failed);
      }
    }
    std::exchange(state.done, nullptr)(std::move(state.reply));
  }

  // Whether this connection's server takes SET with both NX and GET (Redis 7.0 and
  // later), asked once per connection, since a reconnect may reach another server. Until
  // the answer comes, acquires use the script, which every version runs.
  enum class SetNxGet { unknown, accepted, refused };

  void probe_set_nx_get() {
    set_nx_get_ = SetNxGet::unknown;
    const std::array<std::string_view, 1> hello{"HELLO"};
    connection_->command(hello, probe_timeout_, [this](const net::ReplyView& view) {
      // A dropped connection says nothing of the server: the next one asks again.
      if (view.error == errc::connection_error || view.error == errc::cancelled) return;
      set_nx_get_ = accepts_set_nx_get(view) ? SetNxGet::accepted : SetNxGet::refused;
    });
  }

  // SET key value NX PX ttl GET: nil when granted, the holder's value when refused. A
  // refusal's TTL comes from a PTTL, sent with the attempt (HolderTtl::with_attempt) or
  // after the refusal; the kind of a key of another type from a TYPE. Both only read, so
  // one that runs after the key changed hands harms nothing.
  void acquire_with_set(std::string_view key, std::string_view value, std::string_view ttl_ms,
                        HolderTtl holder_ttl, std::chrono::milliseconds timeout,
                        NodeCallback&& done) {
    const std::array<std::string_view, 7> set{"SET", key, value, "NX", "PX", ttl_ms, "GET"};
    const bool with_ttl = holder_ttl == HolderTtl::with_attempt;
    const std::uint32_t slot = open_call(std::move(done), with_ttl ? 2 : 1);
    Call& call = calls_[slot];
    call.key.assign(key);
    call.timeout = timeout;
    call.set_answered = false;
    call.ttl_asked = with_ttl;
    call.ttl_answered = false;
    call.ttl = std::chrono::milliseconds(-1);
    connection_->command(
        set, timeout, [this, slot](const net::ReplyView& view) { on_set_reply(slot, view); },
        shared(&FanOutCommands::set));
    if (with_ttl) {
      const std::array<std::string_view, 2> pttl{"PTTL", key};
      connection_->command(
          pttl, timeout, [this, slot](const net::ReplyView& view) { on_ttl_reply(slot, view); },
          shared(&FanOutCommands::pttl));
    }
  }

  void on_set_reply(std::uint32_t slot, const net::ReplyView& view) {
    Call& call = calls_[slot];
    const SetAnswer answer = classify_set_reply(view);
    call.set_answered = true;
    call.answer = answer;
    if (answer == SetAnswer::unsupported) {
      // Not re-sent as the script now: a release of this attempt may already be queued
      // behind it, and the script would then run after it and leave our value for a
      // whole TTL. This node fails this attempt alone; the next ones use the script.
      set_nx_get_ = SetNxGet::refused;
      NodeReply reply = failed_call(view);
      reply.detail = where_ + ": SET with NX and GET refused (" + reply.detail +
                     "): the server predates Redis 7.0, so the acquire script is used from now";
      return finish_call(slot, std::move(reply));
    }
    if (answer == SetAnswer::wrong_type) {
      if (!connection_) return finish_call(slot, wrong_kind_from_type({}));
      ++call.replies_due;
      const std::array<std::string_view, 2> type{"TYPE", call.key[0]};
      connection_->command(type, call.timeout, [this, slot](const net::ReplyView& reply) {
        finish_call(slot, wrong_kind_from_type(reply));
      });
      return finish_call(slot);
    }
    NodeReply reply = set_reply(answer, view, where_);
    attribute(reply, view);
    if (answer == SetAnswer::held && !call.ttl_asked && connection_) {
      call.reply = std::move(reply);
      call.ttl_asked = true;
      ++call.replies_due;
      const std::array<std::string_view, 2> pttl{"PTTL", call.key[0]};
      connection_->command(pttl, call.timeout, [this, slot](const net::ReplyView& reply) {
        on_ttl_reply(slot, reply);
      });
      return finish_call(slot);
    }
    // Kept in the slot only while a PTTL sent with the attempt is still due; a grant (the
    // common answer) goes to the round at once, not moved through the slot and back.
    if (call.ttl_asked && !call.ttl_answered) {
      call.reply = std::move(reply);
      return finish_call(slot);
    }
    if (answer == SetAnswer::held) reply.remaining_ttl = call.ttl;
    finish_call(slot, std::move(reply));
  }

  void on_ttl_reply(std::uint32_t slot, const net::ReplyView& view) {
    Call& call = calls_[slot];
    call.ttl_answered = true;
    call.ttl = remaining_ttl_of(view);
    conclude_set(slot);
  }

  // Answers the acquire once what it waits for came: the SET's reply, and the PTTL's when
  // one was asked (a failure is delivered on a later loop turn, so either may come first).
  void conclude_set(std::uint32_t slot) {
    Call& call = calls_[slot];
    // A key of another type is answered by its TYPE's reply instead.
    if (!call.set_answered || (call.ttl_asked && !call.ttl_answered) || !call.done ||
        call.answer == SetAnswer::wrong_type) {
      return finish_call(slot);
    }
    NodeReply reply = std::move(call.reply);
    if (call.answer == SetAnswer::held) reply.remaining_ttl = call.ttl;
    finish_call(slot, std::move(reply));
  }

  // A call in flight on the connection: what its replies need. Reply callbacks capture
  // only this node and the slot's index, which std::function stores without allocating,
  // and slots are reused with their strings' capacity: a lock cycle allocates nothing
  // here. The callbacks run only while the connection is open or closing, so while this
  // node lives (when it is closed, calls are answered without a slot: answer_closed).
  struct Call {
    NodeCallback done;
    int replies_due = 0;  // reply callbacks still to run; the slot is free at 0
    std::chrono::milliseconds timeout{0};
    // An acquire by SET NX GET.
    SavedTexts key;
    SetAnswer answer = SetAnswer::failed;
    NodeReply reply;
    std::chrono::milliseconds ttl{-1};
    bool set_answered = false;
    bool ttl_asked = false;
    bool ttl_answered = false;
    // A script: how its reply reads; for a release, what a re-send needs.
    ReplyReader read = nullptr;
    const scripts::Script* script = nullptr;
    SavedTexts script_texts;  // a release's keys, then its arguments
    std::size_t script_keys = 0;
    int tries = 0;
  };

  std::uint32_t open_call(NodeCallback&& done, int replies_due) {
    std::uint32_t slot = 0;
    if (free_calls_.empty()) {
      slot = static_cast<std::uint32_t>(calls_.size());
      calls_.emplace_back();
      free_calls_.reserve(calls_.capacity());
    } else {
      slot = free_calls_.back();
      free_calls_.pop_back();
    }
    calls_[slot].done = std::move(done);
    calls_[slot].replies_due = replies_due;
    return slot;
  }

  // One reply callback of the call in `slot` ran: answers the call with `reply`, if not
  // answered yet, once the slot's bookkeeping is done (the answer may open calls, which
  // may move the slots, so `reply` must not live in one). The reply is passed on by
  // reference: each move of a NodeReply copies its short strings, and a reply went
  // through four on its way to the round.
  void finish_call(std::uint32_t slot, NodeReply&& reply) {
    Call& call = calls_[slot];
    NodeCallback done = std::move(call.done);  // leaves it empty
    release_slot(slot);
    if (done) done(std::move(reply));
  }

  // A reply callback of the call in `slot` ran without answering it (another reply of the
  // call will).
  void finish_call(std::uint32_t slot) { release_slot(slot); }

  void release_slot(std::uint32_t slot) {
    Call& call = calls_[slot];
    if (--call.replies_due == 0) {
      call.done = nullptr;
      free_calls_.push_back(slot);
    }
  }

  // Closed: keep the contract (exactly once, never synchronously) without a connection,
  // answering cancelled on a later loop turn as the connection itself would.
  void answer_closed(NodeCallback done) {
    net::run_next_turn(loop_, [done = std::move(done), where = where_] {
      const std::string detail = where + ": connection closed";
      done(failed_call(net::ReplyView{make_error_code(errc::cancelled), detail, nullptr}));
    });
  }

  // The Command's script, or the plain command that stands for it.
  void send_command(const Command& command, std::chrono::milliseconds timeout,
                    NodeCallback&& done) {
    if (command.by_set_nx_get && set_nx_get_ == SetNxGet::accepted) {
      return acquire_with_set(command.keys[0], command.args[0], command.args[1], command.holder_ttl,
                              timeout, std::move(done));
    }
    send_script(command, timeout, std::move(done));
  }

  // A Command's script; its reply read by the Command's reader.
  void send_script(const Command& command, std::chrono::milliseconds timeout, NodeCallback&& done) {
    const std::uint32_t slot = open_call(std::move(done), 1);
    calls_[slot].read = command.read;
    connection_->eval(
        *command.script, command.keys, command.args, timeout,
        [this, slot](const net::ReplyView& view) {
          NodeReply reply = view.error ? failed_call(view) : calls_[slot].read(view.reply, where_);
          attribute(reply, view);
          finish_call(slot, std::move(reply));
        },
        shared(command));
  }

  // A release kept for a re-send: its script with every key and argument.
  struct UnsentRelease {
    const scripts::Script* script = nullptr;
    std::vector<std::string> keys;
    std::vector<std::string> args;
    ReplyReader read = nullptr;
    std::chrono::milliseconds timeout{0};
    std::chrono::steady_clock::time_point given_up_at;
    int tries = 0;
  };

  // The keys and arguments are kept in the call's slot (capacity reused: no allocation
  // once the slots are warm) for the rare re-send.
  void send_release(const Command& command, std::chrono::milliseconds timeout, int tries,
                    NodeCallback&& done) {
    if (!connection_) return answer_closed(std::move(done));
    const std::uint32_t slot = open_call(std::move(done), 1);
    Call& call = calls_[slot];
    call.read = command.read;
    call.script = command.script;
    call.script_texts.assign({command.keys, command.args});
    call.script_keys = command.keys.size();
    call.timeout = timeout;
    call.tries = tries;
    connection_->eval(
        *command.script, command.keys, command.args, timeout,
        [this, slot](const net::ReplyView& view) { on_release_reply(slot, view); },
        shared(command));
  }

  void on_release_reply(std::uint32_t slot, const net::ReplyView& view) {
    Call& call = calls_[slot];
    NodeReply reply = view.error ? failed_call(view) : call.read(view.reply, where_);
    if (reply.status == NodeStatus::connection_error || reply.status == NodeStatus::timeout ||
        (reply.status == NodeStatus::redis_error && reply.error != errc::wrong_kind)) {
      UnsentRelease release;
      release.script = call.script;
      release.keys = call.script_texts.copies(0, call.script_keys);
      release.args = call.script_texts.copies(call.script_keys);
      release.read = call.read;
      release.timeout = call.timeout;
      release.tries = call.tries + 1;
      remember(std::move(release), reply.status != NodeStatus::connection_error);
    }
    finish_call(slot, std::move(reply));
  }

  // `retry_soon`: the node answered (an error) or not at all while connected; else it is
  // unreachable and the release waits for the reconnect. A node that keeps failing the
  // release (a replica: READONLY) is given up on after a few tries, not retried forever.
  void remember(UnsentRelease release, bool retry_soon) {
    if (release.tries > max_release_tries) return;
    const int tries = release.tries;
    // Bounded: a node that stays away must not grow memory. The oldest are the likeliest
    // to have expired by themselves.
    if (unsent_releases_.size() >= max_unsent_releases) {
      unsent_releases_.erase(unsent_releases_.begin());
    }
    release.given_up_at = std::chrono::steady_clock::now() + max_ttl_kept;
    unsent_releases_.push_back(std::move(release));
    if (!connection_ || !retry_soon) return;
    if (!retry_timer_) retry_timer_ = net::Timer::create(loop_);
    retry_timer_->start(release_resend.delay(tries, 0), [this] { resend_releases(); });
  }

  void resend_releases() {
    const auto now = std::chrono::steady_clock::now();
    auto releases = std::exchange(unsent_releases_, {});
    for (auto& release : releases) {
      if (release.given_up_at < now) continue;
      const std::vector<std::string_view> keys(release.keys.begin(), release.keys.end());
      const std::vector<std::string_view> args(release.args.begin(), release.args.end());
      Command command;
      command.script = release.script;
      command.keys = keys;
      command.args = args;
      command.read = release.read;
      send_release(command, release.timeout, release.tries, [](NodeReply) {});
    }
  }

  // No release is kept longer than a lock can live (the longest TTL accepted).
  static constexpr auto max_ttl_kept = std::chrono::hours(24 * 365);
  static constexpr std::size_t max_unsent_releases = 1024;
  // The same wait for every try, not jittered: the re-sends are this client's own, one
  // timer for all of them, and collide with no one's.
  static constexpr core::Backoff release_resend =
      core::Backoff::fixed(std::chrono::milliseconds(200));
  static constexpr int max_release_tries = 10;

  std::string name_;
  // Reply callbacks point at it rather than copy it: they read it only for a reply, and
  // replies come only while the connection is open, so while this node lives.
  std::string where_;
  std::vector<UnsentRelease> unsent_releases_;
  std::vector<Call> calls_;
  std::vector<std::uint32_t> free_calls_;
  uv_loop_s* loop_;
  std::chrono::milliseconds probe_timeout_;
  SetNxGet set_nx_get_ = SetNxGet::unknown;
  int replicas_to_ack_ = 0;
  // Replica acknowledgements (cover_by_wait): the grants written since the WAIT in flight,
  // whether one is, and the connection it was sent on.
  std::vector<std::shared_ptr<AckState>> unwaited_;
  bool waiting_ = false;
  std::uint64_t wait_generation_ = 0;
  // Before connection_, whose callbacks point into it.
  std::unique_ptr<MemberKind> kind_;
  net::TimerPtr retry_timer_;      // closed in close()
  net::ConnectionPtr connection_;  // last: closed before the members its callbacks touch
};

}  // namespace

void Node::run_key_set(std::span<const std::string> keys, const KeySetScript& script,
                       std::chrono::milliseconds timeout, ReplyReader read, NodeCallback done) {
  ScriptCall call;
  std::vector<std::size_t> positions(keys.size());
  for (std::size_t i = 0; i < positions.size(); ++i) positions[i] = i;
  script.part(positions, call);
  const Command command = call.command(*script.script, read);
  if (script.call == KeySetCall::release) return release(command, timeout, std::move(done));
  run(command, timeout, std::move(done));
}

std::string Node::fence_key(std::string_view key) const {
  return std::string(key) + scripts::fence_suffix;
}

std::string Node::companion_key(std::string_view key, std::string_view suffix) const {
  return std::string(key).append(suffix);
}

const core::MemberGuard& Node::guard() const noexcept {
  static const core::MemberGuard never_guarded;
  return never_guarded;
}

std::unique_ptr<Node> make_redis_node(uv_loop_s* loop, net::ConnectionOptions options) {
  return std::make_unique<RedisNode>(loop, std::move(options));
}

FanOut::FanOut() noexcept {
  // A bracket inside another shares nothing.
  if (++fan_out_depth != 1) {
    fan_out = nullptr;
    return;
  }
  auto& commands = fan_out_storage();
  commands.set.clear();
  commands.pttl.clear();
  commands.scripts_used = 0;
  fan_out = &commands;
}

FanOut::~FanOut() {
  fan_out = --fan_out_depth == 1 ? &fan_out_storage() : nullptr;
}

NodeReply failed_call(const net::ReplyView& view) {
  NodeReply reply;
  reply.error = view.error;
  reply.detail = std::string(view.detail);
  reply.unsent = view.unsent;
  if (view.error == errc::timeout) {
    reply.status = NodeStatus::timeout;
  } else if (view.error == errc::cancelled) {
    reply.status = NodeStatus::cancelled;
  } else if (view.error == errc::redis_error || view.error == errc::protocol_error) {
    reply.status = NodeStatus::redis_error;
  } else {
    // connection_error, auth_error, tls_error, overloaded: the node is not usable now.
    reply.status = NodeStatus::connection_error;
  }
  return reply;
}

NodeReply unexpected_reply_to(std::string_view what, const redisReply* reply,
                              std::string_view where) {
  NodeReply result;
  result.status = NodeStatus::redis_error;
  result.error = make_error_code(errc::protocol_error);
  result.detail = std::string(where) + ": unexpected reply to " + std::string(what) + ": " +
                  describe_reply(reply);
  return result;
}

NodeReply wrong_kind_reply(std::string_view redis_type) {
  NodeReply reply;
  reply.status = NodeStatus::redis_error;
  reply.error = make_error_code(errc::wrong_kind);
  if (redis_type == "string") {
    reply.detail = "the key is an exclusive lock";
  } else if (redis_type == "zset") {
    reply.detail = "the key is a semaphore";
  } else if (redis_type == "hash") {
    reply.detail = "the key is a read-write lock";
  } else {
    reply.detail = "the key is a Redis " + std::string(redis_type) + ", not a lock of this library";
  }
  return reply;
}

std::string describe_reply(const redisReply* reply) {
  if (reply == nullptr) return "no reply";
  switch (reply->type) {
    case REDIS_REPLY_INTEGER:
      return "integer " + std::to_string(reply->integer);
    case REDIS_REPLY_NIL:
      return "nil";
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR: {
      std::string text(reply->str, std::min<std::size_t>(reply->len, 64));
      return (reply->type == REDIS_REPLY_STRING ? "string \"" : "status \"") + text + "\"";
    }
    case REDIS_REPLY_ARRAY: {
      std::string text = "array of " + std::to_string(reply->elements) + ": [";
      for (std::size_t i = 0; i < reply->elements && i < 4; ++i) {
        if (i > 0) text += ", ";
        text += describe_reply(reply->element[i]);
      }
      return text + (reply->elements > 4 ? ", ...]" : "]");
    }
    default:
      return "reply of type " + std::to_string(reply->type);
  }
}

}  // namespace redlock::detail

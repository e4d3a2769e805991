#include "client/node.hpp"

#include <hiredis/hiredis.h>

#include <array>
#include <charconv>
#include <chrono>
#include <utility>
#include <vector>

#include "client/acquire_reply.hpp"
#include "client/timer.hpp"
#include "scripts/lock_scripts.hpp"

namespace redlock::detail {

namespace {

bool is_integer(const redisReply* reply, long long value) {
  return reply->type == REDIS_REPLY_INTEGER && reply->integer == value;
}

std::string decimal(std::uint64_t value) {
  std::array<char, 24> buffer{};
  auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  (void)ec;
  return std::string(buffer.data(), end);
}

class RedisNode final : public Node {
 public:
  RedisNode(uv_loop_s* loop, net::ConnectionOptions options)
      : name_(options.endpoint.display),
        where_(options.endpoint.display),
        loop_(loop),
        probe_timeout_(options.connect_timeout) {
    // The connection calls this only while it is open, and it is closed before this node
    // goes away (connection_ is the last member).
    // An on_ready already set (the observer's) runs first.
    options.on_ready = [this, observed = std::move(options.on_ready)] {
      if (observed) observed();
      probe_set_nx_get();
      resend_releases();
    };
    connection_.reset(net::Connection::create(loop, std::move(options)));
  }

  ~RedisNode() override { close(); }

  const std::string& name() const noexcept override { return name_; }

  void acquire(std::string_view key, std::string_view value, std::chrono::milliseconds ttl,
               bool fencing, HolderTtl holder_ttl, std::chrono::milliseconds timeout,
               NodeCallback done) override {
    // Fencing needs the counter's INCR in the same atomic step as the SET: the script.
    if (!fencing && set_nx_get_ == SetNxGet::accepted && connection_) {
      return acquire_with_set(key, value, ttl, holder_ttl, timeout, std::move(done));
    }
    const std::string fence_key = std::string(key) + scripts::fence_suffix;
    const std::string ttl_ms = std::to_string(ttl.count());
    const std::array<std::string_view, 2> keys{key, fence_key};
    const std::array<std::string_view, 3> args{value, ttl_ms, fencing ? "1" : "0"};
    submit(scripts::acquire(), keys, args, timeout,
           [done = std::move(done), where = &where_](const net::ReplyView& view) {
             if (view.error) return done(failed_call(view));
             done(interpret_acquire_script(view.reply, *where));
           });
  }

  void release(std::string_view key, std::string_view value, Announce announce,
               std::chrono::milliseconds timeout, NodeCallback done) override {
    send_release(key, value, announce, timeout, 0, std::move(done));
  }

  void send_release(std::string_view key, std::string_view value, Announce announce,
                    std::chrono::milliseconds timeout, int tries, NodeCallback done) {
    const std::array<std::string_view, 1> keys{key};
    const std::array<std::string_view, 2> args{value, announce == Announce::yes ? "1" : "0"};
    // A release that may not have reached the node (its connection dropped, no reply came,
    // or the node was still loading its data after a restart) is sent again when the
    // connection is back and then every retry interval until the node answers: it is
    // owner-checked and idempotent, and without it the node would keep our value, and
    // refuse everyone else, for the rest of the key's TTL.
    submit(scripts::release(), keys, args, timeout,
           owner_checked("release", [this, key = std::string(key), value = std::string(value),
                                     announce, timeout, tries,
                                     done = std::move(done)](NodeReply reply) {
             if (reply.status == NodeStatus::connection_error ||
                 reply.status == NodeStatus::timeout || reply.status == NodeStatus::redis_error) {
               remember_release(key, value, announce, timeout, tries + 1,
                                reply.status != NodeStatus::connection_error);
             }
             done(std::move(reply));
           }));
  }

  void extend(std::string_view key, std::string_view value, std::chrono::milliseconds ttl,
              std::chrono::milliseconds timeout, NodeCallback done) override {
    const std::string ttl_ms = std::to_string(ttl.count());
    const std::array<std::string_view, 1> keys{key};
    const std::array<std::string_view, 2> args{value, ttl_ms};
    submit(scripts::extend(), keys, args, timeout, owner_checked("extend", std::move(done)));
  }

  void fence(std::string_view key, std::string_view value, std::uint64_t token,
             std::chrono::milliseconds timeout, NodeCallback done) override {
    const std::string fence_key = std::string(key) + scripts::fence_suffix;
    const std::string token_text = decimal(token);
    const std::array<std::string_view, 2> keys{key, fence_key};
    const std::array<std::string_view, 2> args{value, token_text};
    submit(scripts::fence(), keys, args, timeout, owner_checked("fence", std::move(done)));
  }

  void inspect(std::string_view key, std::chrono::milliseconds timeout,
               NodeCallback done) override {
    const std::array<std::string_view, 1> keys{key};
    submit(scripts::inspect(), keys, {}, timeout,
           [done = std::move(done), where = &where_](const net::ReplyView& view) {
             if (view.error) return done(failed_call(view));
             const redisReply* r = view.reply;
             if (r->type == REDIS_REPLY_ARRAY && r->elements == 2 &&
                 r->element[0]->type == REDIS_REPLY_INTEGER &&
                 r->element[1]->type == REDIS_REPLY_STRING) {
               if (r->element[0]->integer == -3) {
                 return done(wrong_kind_reply({r->element[1]->str, r->element[1]->len}));
               }
               NodeReply status;
               if (r->element[0]->integer == -2) {
                 status.status = NodeStatus::not_held;
               } else {
                 status.status = NodeStatus::held;
                 status.remaining_ttl = std::chrono::milliseconds(r->element[0]->integer);
                 status.holder.assign(r->element[1]->str, r->element[1]->len);
               }
               return done(std::move(status));
             }
             done(unexpected_reply_to("the inspect script", r, *where));
           });
  }

  void run_family_script(const scripts::Script& script, std::span<const std::string_view> keys,
                         std::span<const std::string_view> args, std::chrono::milliseconds timeout,
                         FamilyInterpreter interpret, NodeCallback done) override {
    submit(script, keys, args, timeout,
           [done = std::move(done), where = &where_, interpret](const net::ReplyView& view) {
             if (view.error) return done(failed_call(view));
             done(interpret(view.reply, *where));
           });
  }

  void close() override {
    unsent_releases_.clear();
    retry_timer_.reset();
    connection_.reset();
  }

 private:
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
  void acquire_with_set(std::string_view key, std::string_view value, std::chrono::milliseconds ttl,
                        HolderTtl holder_ttl, std::chrono::milliseconds timeout,
                        NodeCallback done) {
    char ttl_text[24];
    const auto ttl_end = std::to_chars(ttl_text, ttl_text + sizeof ttl_text, ttl.count()).ptr;
    const std::array<std::string_view, 7> set{
        "SET", key,  value,
        "NX",  "PX", std::string_view(ttl_text, static_cast<std::size_t>(ttl_end - ttl_text)),
        "GET"};
    const std::array<std::string_view, 2> pttl{"PTTL", key};
    if (holder_ttl == HolderTtl::after_refusal) {
      connection_->command(set, timeout,
                           [this, key = std::string(key), timeout,
                            done = std::move(done)](const net::ReplyView& view) mutable {
                             const SetAnswer answer = classify_set_reply(view);
                             conclude_set(answer, view, key, timeout, answer == SetAnswer::held,
                                          std::move(done));
                           });
      return;
    }
    // Two commands, one answer, given by whichever reply comes second: a failure is
    // delivered on a later loop turn, so it may come after the other command's reply.
    struct Pair {
      std::string key;
      NodeCallback done;
      SetAnswer answer = SetAnswer::failed;
      NodeReply set;
      std::chrono::milliseconds ttl{-1};
      int answered = 0;
    };
    auto pair = std::make_shared<Pair>();
    pair->key.assign(key);
    pair->done = std::move(done);
    connection_->command(set, timeout, [this, pair, timeout](const net::ReplyView& view) {
      pair->answer = classify_set_reply(view);
      pair->set = set_reply(pair->answer, view, where_);
      if (pair->answer == SetAnswer::wrong_type || pair->answer == SetAnswer::unsupported) {
        // Decided by this reply alone; the PTTL's is not waited for.
        return conclude_set(pair->answer, view, pair->key, timeout, false,
                            std::exchange(pair->done, nullptr));
      }
      if (++pair->answered == 2) complete(*pair);
    });
    connection_->command(pttl, timeout, [pair](const net::ReplyView& view) {
      pair->ttl = remaining_ttl_of(view);
      if (++pair->answered == 2) complete(*pair);
    });
  }

  template <typename Pair>
  static void complete(Pair& pair) {
    if (!pair.done) return;  // concluded by the SET's reply alone
    if (pair.answer == SetAnswer::held) pair.set.remaining_ttl = pair.ttl;
    std::exchange(pair.done, nullptr)(std::move(pair.set));
  }

  // What a SET's answer means for the node, asking what it does not say by itself.
  void conclude_set(SetAnswer answer, const net::ReplyView& view, const std::string& key,
                    std::chrono::milliseconds timeout, bool ask_ttl, NodeCallback done) {
    if (answer == SetAnswer::unsupported) {
      // Not re-sent as the script now: a release of this attempt may already be queued
      // behind it, and the script would then run after it and leave our value for a
      // whole TTL. This node fails this attempt alone; the next ones use the script.
      set_nx_get_ = SetNxGet::refused;
      NodeReply reply = failed_call(view);
      reply.detail = where_ + ": SET with NX and GET refused (" + reply.detail +
                     "): the server predates Redis 7.0, so the acquire script is used from now";
      return done(std::move(reply));
    }
    const bool wrong_type = answer == SetAnswer::wrong_type;
    if ((!wrong_type && !ask_ttl) || !connection_) {
      NodeReply reply = wrong_type ? wrong_kind_from_type({}) : set_reply(answer, view, where_);
      return done(std::move(reply));
    }
    const std::array<std::string_view, 2> argv{wrong_type ? "TYPE" : "PTTL", key};
    if (wrong_type) {
      return connection_->command(argv, timeout,
                                  [done = std::move(done)](const net::ReplyView& type) {
                                    done(wrong_kind_from_type(type));
                                  });
    }
    connection_->command(argv, timeout,
                         [reply = set_reply(answer, view, where_),
                          done = std::move(done)](const net::ReplyView& ttl) mutable {
                           reply.remaining_ttl = remaining_ttl_of(ttl);
                           done(std::move(reply));
                         });
  }

  net::ReplyCallback owner_checked(const char* operation, NodeCallback done) const {
    return [done = std::move(done), where = &where_, operation](const net::ReplyView& view) {
      if (view.error) return done(failed_call(view));
      NodeReply reply;
      if (is_integer(view.reply, 1)) {
        reply.status = NodeStatus::granted;
      } else if (is_integer(view.reply, 0)) {
        reply.status = NodeStatus::not_held;
      } else {
        reply =
            unexpected_reply_to(std::string("the ") + operation + " script", view.reply, *where);
      }
      done(std::move(reply));
    };
  }

  void submit(const scripts::Script& script, std::span<const std::string_view> keys,
              std::span<const std::string_view> args, std::chrono::milliseconds timeout,
              net::ReplyCallback callback) {
    if (!connection_) {
      // Closed: keep the contract (exactly once, never synchronously) without a connection,
      // answering cancelled on a later loop turn as the connection itself would.
      net::run_next_turn(loop_, [callback = std::move(callback), where = where_] {
        const std::string detail = where + ": connection closed";
        callback(net::ReplyView{make_error_code(errc::cancelled), detail, nullptr});
      });
      return;
    }
    connection_->eval(script, keys, args, timeout, std::move(callback));
  }

  struct UnsentRelease {
    std::string key;
    std::string value;
    Announce announce;
    std::chrono::milliseconds timeout;
    std::chrono::steady_clock::time_point given_up_at;
    int tries;
  };

  // `retry_soon`: the node answered (an error) or not at all while connected; else it is
  // unreachable and the release waits for the reconnect. A node that keeps failing the
  // release (a replica: READONLY) is given up on after a few tries, not retried forever.
  void remember_release(std::string key, std::string value, Announce announce,
                        std::chrono::milliseconds timeout, int tries, bool retry_soon) {
    if (tries > max_release_tries) return;
    // Bounded: a node that stays away must not grow memory. The oldest are the likeliest
    // to have expired by themselves.
    if (unsent_releases_.size() >= max_unsent_releases) {
      unsent_releases_.erase(unsent_releases_.begin());
    }
    unsent_releases_.push_back({std::move(key), std::move(value), announce, timeout,
                                std::chrono::steady_clock::now() + max_ttl_kept, tries});
    if (!connection_ || !retry_soon) return;
    if (!retry_timer_) retry_timer_ = Timer::create(loop_);
    retry_timer_->start(release_retry_interval, [this] { resend_releases(); });
  }

  void resend_releases() {
    const auto now = std::chrono::steady_clock::now();
    auto releases = std::exchange(unsent_releases_, {});
    for (auto& release : releases) {
      if (release.given_up_at < now) continue;
      send_release(release.key, release.value, release.announce, release.timeout, release.tries,
                   [](NodeReply) {});
    }
  }

  // No release is kept longer than a lock can live (the longest TTL accepted).
  static constexpr auto max_ttl_kept = std::chrono::hours(24 * 365);
  static constexpr std::size_t max_unsent_releases = 1024;
  static constexpr std::chrono::milliseconds release_retry_interval{200};
  static constexpr int max_release_tries = 10;

  std::string name_;
  // Reply callbacks point at it rather than copy it: they read it only for a reply, and
  // replies come only while the connection is open, so while this node lives.
  std::string where_;
  std::vector<UnsentRelease> unsent_releases_;
  uv_loop_s* loop_;
  std::chrono::milliseconds probe_timeout_;
  SetNxGet set_nx_get_ = SetNxGet::unknown;
  TimerPtr retry_timer_;           // closed in close()
  net::ConnectionPtr connection_;  // last: closed before the members its callbacks touch
};

}  // namespace

void Node::run_family_script(const scripts::Script& script, std::span<const std::string_view>,
                             std::span<const std::string_view>, std::chrono::milliseconds,
                             FamilyInterpreter, NodeCallback done) {
  NodeReply reply;
  reply.status = NodeStatus::redis_error;
  reply.error = make_error_code(errc::redis_error);
  reply.detail = name() + ": this node does not run the " + std::string(script.name) + " script";
  done(std::move(reply));
}

std::unique_ptr<Node> make_redis_node(uv_loop_s* loop, net::ConnectionOptions options) {
  return std::make_unique<RedisNode>(loop, std::move(options));
}

NodeReply failed_call(const net::ReplyView& view) {
  NodeReply reply;
  reply.error = view.error;
  reply.detail = std::string(view.detail);
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

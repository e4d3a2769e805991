#include <hiredis/hiredis.h>

#include <array>
#include <charconv>
#include <stdexcept>

#include <redlock/fenced_store.hpp>

#include "client/calls/sync_call.hpp"
#include "client/loop/loop_thread.hpp"
#include "client/operations/operations.hpp"
#include "member/node.hpp"
#include "net/connection.hpp"
#include "net/endpoint.hpp"
#include "scripts/lock_scripts.hpp"

namespace redlock {

namespace detail {

/// Where the store keeps the highest token accepted for a resource.
inline std::string highest_token_key(std::string_view resource) {
  return std::string(resource) + ":fenced-token";
}

class FencedStoreImpl {
 public:
  FencedStoreImpl(net::ConnectionOptions options, std::chrono::milliseconds timeout)
      : timeout_(timeout), where_(options.endpoint.display) {
    (void)wait_for_answer<void>(
        loop_,
        [&](Deliver<void> connected) {
          connection_.reset(net::Connection::create(loop_.loop(), std::move(options)));
          connected({});
        },
        std::nullopt);
  }

  ~FencedStoreImpl() {
    // Not in a forked child, where FencedStore leaves this object behind (fork_guard.hpp).
    // The connection is a loop-thread object: closed there, pending calls cancelled.
    loop_.stop([this](std::function<void()> closed) {
      connection_.reset();
      closed();
    });
    loop_.wait_finished();
  }

  /// Runs `submit(connection, reply)` on the loop; `convert` turns the reply (on the
  /// loop thread, while it is valid) into the result.
  template <typename T, typename Submit, typename Convert>
  Result<T> call(Submit submit, Convert convert) {
    if (forked()) {
      return Error(make_error_code(errc::invalid_argument),
                   loop_.fork_guard().message("FencedStore", "FencedStore"));
    }
    if (loop_.on_loop_thread()) {
      return Error(make_error_code(errc::invalid_argument),
                   "FencedStore: called on its own loop thread");
    }
    // The client's one way of waiting for the loop (calls/sync_call.hpp).
    auto answer = wait_for_answer<T>(
        loop_,
        [this, submit, convert](Deliver<T> deliver) mutable {
          submit(*connection_, [deliver, convert](const net::ReplyView& view) {
            if (view.error) return deliver(Error(view.error, std::string(view.detail)));
            deliver(convert(view.reply));
          });
        },
        std::nullopt);
    if (!answer) return cancelled_error("FencedStore");
    return std::move(*answer);
  }

  /// True in a child process forked since create(): the connection and the loop are the
  /// parent's.
  bool forked() const noexcept { return loop_.fork_guard().forked(); }
  std::chrono::milliseconds timeout() const noexcept { return timeout_; }
  const std::string& where() const noexcept { return where_; }

 private:
  std::chrono::milliseconds timeout_;
  std::string where_;
  net::ConnectionPtr connection_;  // loop thread only
  // Last: destroyed first, after the destructor's stop() closed the connection.
  LoopThread loop_;
};

}  // namespace detail

namespace {

Error unexpected_reply(const std::string& where, std::string_view what, const redisReply* reply) {
  return Error(
      make_error_code(errc::protocol_error),
      where + ": unexpected reply to " + std::string(what) + ": " + detail::describe_reply(reply));
}

}  // namespace

std::unique_ptr<FencedStore> FencedStore::create(const std::string& url,
                                                 std::chrono::milliseconds timeout,
                                                 const TlsOptions& tls) {
  auto endpoint = net::parse_endpoint(url);
  if (!endpoint) throw std::invalid_argument("FencedStore: " + endpoint.error().message());
  if (timeout.count() <= 0) throw std::invalid_argument("FencedStore: timeout must be > 0");
  net::ConnectionOptions options;
  options.endpoint = std::move(*endpoint);
  options.connect_timeout = std::max(timeout, std::chrono::milliseconds(1000));
  options.tls = tls;
  return std::unique_ptr<FencedStore>(
      new FencedStore(std::make_unique<detail::FencedStoreImpl>(std::move(options), timeout)));
}

FencedStore::FencedStore(std::unique_ptr<detail::FencedStoreImpl> impl) : impl_(std::move(impl)) {}
FencedStore::~FencedStore() {
  // In a forked child closing the connection would close the parent's (a libuv call on
  // its descriptors), and no loop thread is there to do it: left behind.
  if (impl_->forked()) (void)impl_.release();
}

Result<void> FencedStore::write(std::string_view resource, std::uint64_t token,
                                std::string_view key, std::string_view value) {
  if (resource.empty() || key.empty()) {
    return Error(make_error_code(errc::invalid_argument),
                 "FencedStore::write: resource and key must not be empty");
  }
  // Tokens start at 1, so 0 is never one a lock handed out (a caller passing an
  // unfenced lock's empty token as 0); and the store's script compares them as Lua
  // numbers, exact up to 2^53.
  if (token == 0 || token > (std::uint64_t{1} << 53)) {
    return Error(make_error_code(errc::invalid_argument),
                 "FencedStore::write: token " + std::to_string(token) +
                     " was never issued (tokens are 1 to 2^53; was the lock taken without "
                     "fencing?)");
  }
  auto* impl = impl_.get();
  auto outcome = impl->call<std::int64_t>(
      [token_key = detail::highest_token_key(resource), key = std::string(key),
       value = std::string(value), token = std::to_string(token),
       timeout = impl->timeout()](net::Connection& connection, auto done) {
        const std::array<std::string_view, 2> keys{token_key, key};
        const std::array<std::string_view, 2> args{token, value};
        connection.eval(scripts::fenced_write(), keys, args, timeout, std::move(done));
      },
      [where = impl->where()](const redisReply* reply) -> Result<std::int64_t> {
        if (reply->type == REDIS_REPLY_ARRAY && reply->elements == 2 &&
            reply->element[0]->type == REDIS_REPLY_INTEGER &&
            reply->element[1]->type == REDIS_REPLY_INTEGER) {
          // Accepted: -1 - previous; refused: the highest token (>= 0).
          return reply->element[0]->integer == 1 ? -1 - reply->element[1]->integer
                                                 : reply->element[1]->integer;
        }
        return unexpected_reply(where, "the fenced write", reply);
      });
  if (!outcome) return std::move(outcome).error();
  if (*outcome >= 0) {
    return Error(make_error_code(errc::stale_token),
                 "fenced write of " + detail::quote_key(key) + " refused: token " +
                     std::to_string(token) + " is older than " + std::to_string(*outcome) +
                     ", already used for " + detail::quote_key(resource));
  }
  return {};
}

Result<std::optional<std::string>> FencedStore::read(std::string_view key) {
  auto* impl = impl_.get();
  return impl->call<std::optional<std::string>>(
      [key = std::string(key), timeout = impl->timeout()](net::Connection& connection, auto done) {
        const std::array<std::string_view, 2> argv{"GET", key};
        connection.command(argv, timeout, std::move(done));
      },
      [where = impl->where()](const redisReply* reply) -> Result<std::optional<std::string>> {
        if (reply->type == REDIS_REPLY_NIL) return std::optional<std::string>();
        if (reply->type == REDIS_REPLY_STRING)
          return std::optional<std::string>(std::string(reply->str, reply->len));
        return unexpected_reply(where, "GET", reply);
      });
}

Result<std::uint64_t> FencedStore::highest_token(std::string_view resource) {
  auto* impl = impl_.get();
  return impl->call<std::uint64_t>(
      [key = detail::highest_token_key(resource), timeout = impl->timeout()](
          net::Connection& connection, auto done) {
        const std::array<std::string_view, 2> argv{"GET", key};
        connection.command(argv, timeout, std::move(done));
      },
      [where = impl->where()](const redisReply* reply) -> Result<std::uint64_t> {
        if (reply->type == REDIS_REPLY_NIL) return std::uint64_t{0};
        std::uint64_t value = 0;
        if (reply->type == REDIS_REPLY_STRING) {
          auto [end, ec] = std::from_chars(reply->str, reply->str + reply->len, value);
          if (ec == std::errc() && end == reply->str + reply->len) return value;
        }
        return unexpected_reply(where, "GET of the highest token", reply);
      });
}

}  // namespace redlock

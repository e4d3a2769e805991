#pragma once
// Optional adapter for standalone Asio (Debian's libasio-dev, header <asio.hpp>): every
// *_async method of Client and Lock as an Asio asynchronous operation, following Asio's
// completion-token conventions (asio::async_initiate). So a coroutine writes
//
//   redlock::Result<redlock::Lock> lock =
//       co_await redlock::asio::async_lock(*client, "orders:42", {.ttl = 10s, .wait = 5s},
//                                          asio::use_awaitable);
//
// and the same call takes asio::use_future (a std::future<Result<Lock>>), a plain
// callable, or any other completion token. Header-only; not included by redlock.hpp.
//
// Completion: the handler runs exactly once, posted (never run inline) to its associated
// executor, which defaults to asio::system_executor as for any Asio operation without an
// I/O object; it never runs on the client's loop thread unless that is its executor. The
// operation counts as outstanding work on that executor until then. A failure is a
// Result holding an Error, as with the client's own methods; nothing throws.
//
// Cancellation: the acquisitions — async_lock, async_try_lock, async_read_lock,
// async_write_lock, async_acquire_permit and async_lock_all — support every
// asio::cancellation_type through the handler's associated cancellation slot (set by
// asio::bind_cancellation_slot, by a coroutine's cancellation state, by awaitable
// operators...). An emitted signal is mapped onto LockOptions::stop (for
// async_acquire_permit, SemaphoreOptions::lock.stop): the handler then gets
// errc::cancelled (or, if the lock was already taken, the Lock), and whatever the
// interrupted attempt got is released. When the slot is connected it replaces that stop
// token. async_status, async_inspect, async_release, both async_extend and async_unlock
// end within a node deadline and do not take cancellation.
//
// The slot is touched only while the operation starts, on the initiating thread. As with
// Asio's own operations, its handler stays installed after completion (a later emit
// requests a stop nobody waits for) until the signal's owner replaces or destroys it:
// the completion may run on another thread than the one emitting (a handler without an
// executor of its own runs on the system executor), and a slot is not thread-safe.
//
// Lifetime: the Client (and for async_extend/async_unlock of a Lock, the Lock) must
// outlive the operation; the key and value are copied.

#include <asio/associated_cancellation_slot.hpp>
#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/cancellation_type.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/post.hpp>
#include <asio/system_executor.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <redlock/client.hpp>
#include <redlock/election.hpp>
#include <redlock/lock.hpp>
#include <redlock/options.hpp>
#include <redlock/result.hpp>
#include <redlock/semaphore.hpp>

namespace redlock::asio {

namespace detail {

/// The bridge from the client's callback (on its loop thread) to an Asio handler: keeps
/// the handler's executor busy, optionally maps its cancellation slot onto a stop token,
/// and posts the completion to that executor.
template <typename Handler, typename T>
class Completion {
 public:
  using Executor = ::asio::associated_executor_t<Handler, ::asio::system_executor>;

  explicit Completion(Handler handler) : state_(std::make_shared<State>(std::move(handler))) {}

  /// When the handler has a connected cancellation slot, connects it to a new stop source
  /// and returns its token; else nullopt. On the initiating thread only.
  std::optional<std::stop_token> cancellable() {
    auto slot = ::asio::get_associated_cancellation_slot(state_->handler);
    if (!slot.is_connected()) return std::nullopt;
    std::stop_source source;
    // Owns nothing of the operation, so it may outlive it: see the header comment.
    slot.assign([source](::asio::cancellation_type type) mutable {
      if (type != ::asio::cancellation_type::none) source.request_stop();
    });
    return source.get_token();
  }

  /// The client's callback. Any thread; called once.
  std::function<void(T)> callback() && {
    return [state = std::move(state_)](T result) mutable {
      // The work is given up only once post() returned: until then the executor's
      // context cannot run out of work, so its owner cannot destroy it while post() is
      // still waking one of its threads.
      auto work = std::move(state->work);
      ::asio::post(work.get_executor(),
                   [state = std::move(state), result = std::move(result)]() mutable {
                     auto handler = std::move(state->handler);
                     std::move(handler)(std::move(result));
                   });
      work.reset();
    };
  }

 private:
  struct State {
    explicit State(Handler h)
        : work(::asio::make_work_guard(::asio::get_associated_executor(h))),
          handler(std::move(h)) {}
    ::asio::executor_work_guard<Executor> work;
    Handler handler;
  };
  std::shared_ptr<State> state_;
};

template <typename T, typename Handler>
Completion<std::decay_t<Handler>, T> complete_with(Handler&& handler) {
  return Completion<std::decay_t<Handler>, T>(std::forward<Handler>(handler));
}

inline std::stop_token& stop_of(LockOptions& options) {
  return options.stop;
}
inline std::stop_token& stop_of(SemaphoreOptions& options) {
  return options.lock.stop;
}

/// Every acquisition: `start(options, callback)` begins the client's call once the
/// handler's cancellation slot, if any, has become the options' stop token.
struct InitiateAcquire {
  template <typename Handler, typename Start, typename Options>
  void operator()(Handler&& handler, Start start, Options options) const {
    auto completion = complete_with<Result<Lock>>(std::forward<Handler>(handler));
    if (auto stop = completion.cancellable()) stop_of(options) = std::move(*stop);
    std::move(start)(std::move(options), std::move(completion).callback());
  }
};

template <typename CompletionToken, typename Options, typename Start>
auto async_acquire(CompletionToken&& token, Options options, Start start) {
  return ::asio::async_initiate<CompletionToken, void(Result<Lock>)>(
      InitiateAcquire{}, token, std::move(start), std::move(options));
}

/// Starts `Method` (a Client::*_async acquisition of one key) on a copy of the key, which
/// a deferred initiation (use_awaitable...) keeps until it runs.
template <auto Method>
struct OnKey {
  Client* client;
  std::string key;
  template <typename Options>
  void operator()(Options options, Client::LockCallback callback) const {
    (client->*Method)(key, std::move(options), std::move(callback));
  }
};

/// Starts Client::lock_all_async on its own copy of the keys.
struct OnKeys {
  Client* client;
  std::vector<std::string> keys;
  void operator()(LockOptions options, Client::LockCallback callback) const {
    client->lock_all_async(keys, std::move(options), std::move(callback));
  }
};

}  // namespace detail

/// Client::lock_async as an Asio operation; signature void(redlock::Result<redlock::Lock>).
/// Cancellable (see above).
template <typename CompletionToken>
auto async_lock(Client& client, std::string_view key, LockOptions options,
                CompletionToken&& token) {
  return detail::async_acquire(std::forward<CompletionToken>(token), std::move(options),
                               detail::OnKey<&Client::lock_async>{&client, std::string(key)});
}

/// One attempt, as Client::try_lock_async; signature void(redlock::Result<redlock::Lock>).
/// Runs as a lock_async without wait, which is what makes it cancellable (see above).
template <typename CompletionToken>
auto async_try_lock(Client& client, std::string_view key, std::chrono::milliseconds ttl,
                    CompletionToken&& token) {
  LockOptions options;
  options.ttl = ttl;
  return async_lock(client, key, std::move(options), std::forward<CompletionToken>(token));
}

/// Client::read_lock_async, a shared hold of a read-write lock; signature
/// void(redlock::Result<redlock::Lock>). Cancellable (see above).
template <typename CompletionToken>
auto async_read_lock(Client& client, std::string_view key, LockOptions options,
                     CompletionToken&& token) {
  return detail::async_acquire(std::forward<CompletionToken>(token), std::move(options),
                               detail::OnKey<&Client::read_lock_async>{&client, std::string(key)});
}

/// Client::write_lock_async, the exclusive hold of a read-write lock; signature
/// void(redlock::Result<redlock::Lock>). Cancellable (see above).
template <typename CompletionToken>
auto async_write_lock(Client& client, std::string_view key, LockOptions options,
                      CompletionToken&& token) {
  return detail::async_acquire(std::forward<CompletionToken>(token), std::move(options),
                               detail::OnKey<&Client::write_lock_async>{&client, std::string(key)});
}

/// Client::acquire_permit_async, one permit of a counting semaphore; signature
/// void(redlock::Result<redlock::Lock>). Cancellable through options.lock.stop (see above).
template <typename CompletionToken>
auto async_acquire_permit(Client& client, std::string_view key, SemaphoreOptions options,
                          CompletionToken&& token) {
  return detail::async_acquire(
      std::forward<CompletionToken>(token), std::move(options),
      detail::OnKey<&Client::acquire_permit_async>{&client, std::string(key)});
}

/// Client::lock_all_async, exclusive locks on every key taken as one; signature
/// void(redlock::Result<redlock::Lock>). Cancellable (see above). Takes the keys by value
/// (a braced list, a moved or copied vector).
template <typename CompletionToken>
auto async_lock_all(Client& client, std::vector<std::string> keys, LockOptions options,
                    CompletionToken&& token) {
  return detail::async_acquire(std::forward<CompletionToken>(token), std::move(options),
                               detail::OnKeys{&client, std::move(keys)});
}

/// async_lock_all on a copy of `keys`.
template <typename CompletionToken>
auto async_lock_all(Client& client, std::span<const std::string> keys, LockOptions options,
                    CompletionToken&& token) {
  return async_lock_all(client, std::vector<std::string>(keys.begin(), keys.end()),
                        std::move(options), std::forward<CompletionToken>(token));
}

/// Client::status_async; signature void(redlock::Result<std::vector<redlock::NodeOutcome>>).
template <typename CompletionToken>
auto async_status(Client& client, std::string_view key, CompletionToken&& token) {
  using T = Result<std::vector<NodeOutcome>>;
  return ::asio::async_initiate<CompletionToken, void(T)>(
      [](auto&& handler, Client* client, std::string key) {
        client->status_async(key, detail::complete_with<T>(std::move(handler)).callback());
      },
      token, &client, std::string(key));
}

/// Client::inspect_async (any kind of key); signature
/// void(redlock::Result<std::vector<redlock::NodeView>>).
template <typename CompletionToken>
auto async_inspect(Client& client, std::string_view key, CompletionToken&& token) {
  using T = Result<std::vector<NodeView>>;
  return ::asio::async_initiate<CompletionToken, void(T)>(
      [](auto&& handler, Client* client, std::string key) {
        client->inspect_async(key, detail::complete_with<T>(std::move(handler)).callback());
      },
      token, &client, std::string(key));
}

/// Client::release_async (owner-checked release by value); signature
/// void(redlock::Result<void>).
template <typename CompletionToken>
auto async_release(Client& client, std::string_view key, std::string_view value,
                   CompletionToken&& token) {
  return ::asio::async_initiate<CompletionToken, void(Result<void>)>(
      [](auto&& handler, Client* client, std::string key, std::string value) {
        client->release_async(key, value,
                              detail::complete_with<Result<void>>(std::move(handler)).callback());
      },
      token, &client, std::string(key), std::string(value));
}

/// Client::extend_async (owner-checked extension by value); signature
/// void(redlock::Result<std::chrono::milliseconds>) with the new validity.
template <typename CompletionToken>
auto async_extend(Client& client, std::string_view key, std::string_view value,
                  std::chrono::milliseconds ttl, CompletionToken&& token) {
  using T = Result<std::chrono::milliseconds>;
  return ::asio::async_initiate<CompletionToken, void(T)>(
      [](auto&& handler, Client* client, std::string key, std::string value,
         std::chrono::milliseconds ttl) {
        client->extend_async(key, value, ttl,
                             detail::complete_with<T>(std::move(handler)).callback());
      },
      token, &client, std::string(key), std::string(value), ttl);
}

/// Lock::extend_async; signature void(redlock::Result<void>).
template <typename CompletionToken>
auto async_extend(Lock& lock, std::chrono::milliseconds ttl, CompletionToken&& token) {
  return ::asio::async_initiate<CompletionToken, void(Result<void>)>(
      [](auto&& handler, Lock* lock, std::chrono::milliseconds ttl) {
        lock->extend_async(ttl, detail::complete_with<Result<void>>(std::move(handler)).callback());
      },
      token, &lock, ttl);
}

/// Lock::unlock_async; signature void(redlock::Result<void>).
template <typename CompletionToken>
auto async_unlock(Lock& lock, CompletionToken&& token) {
  return ::asio::async_initiate<CompletionToken, void(Result<void>)>(
      [](auto&& handler, Lock* lock) {
        lock->unlock_async(detail::complete_with<Result<void>>(std::move(handler)).callback());
      },
      token, &lock);
}

/// Election::campaign_async as an Asio operation; signature
/// void(redlock::Result<redlock::Leadership>). Cancellable like the acquisitions: the
/// handler's cancellation slot becomes the campaign's stop token (errc::cancelled). The
/// Election must outlive the operation.
template <typename CompletionToken>
auto async_campaign(Election& election, std::chrono::milliseconds wait, CompletionToken&& token) {
  using T = Result<Leadership>;
  return ::asio::async_initiate<CompletionToken, void(T)>(
      [](auto&& handler, Election* election, std::chrono::milliseconds wait) {
        auto completion = detail::complete_with<T>(std::move(handler));
        std::stop_token stop;
        if (auto cancellable = completion.cancellable()) stop = std::move(*cancellable);
        election->campaign_async(std::move(stop), wait, std::move(completion).callback());
      },
      token, &election, wait);
}

}  // namespace redlock::asio

#pragma once
// Scoped work under a lock: take it, run a function that can be told to stop when the
// lock is lost, release it however the function ends.

#include <concepts>
#include <functional>
#include <stop_token>
#include <string_view>
#include <type_traits>
#include <utility>

#include <redlock/client.hpp>
#include <redlock/lock.hpp>
#include <redlock/options.hpp>
#include <redlock/result.hpp>

namespace redlock {

namespace detail {

template <typename Work>
decltype(auto) invoke_work(Work& work, Lock& lock, std::stop_token stop) {
  if constexpr (std::invocable<Work&, Lock&, std::stop_token>) {
    return std::invoke(work, lock, std::move(stop));
  } else {
    return std::invoke(work, std::move(stop));
  }
}

template <typename Work>
using work_result_t = decltype(invoke_work(std::declval<Work&>(), std::declval<Lock&>(),
                                           std::declval<std::stop_token>()));

}  // namespace detail

/// Takes `key` with client.lock(key, options) (so it waits, can be cancelled through
/// options.stop, and fails fast as options say), then runs `work(lock, stop)` or
/// `work(stop)` on the calling thread and releases the lock when `work` returns or throws
/// (the exception propagates after the release).
///
/// `stop` is requested when the lock ends early: the watchdog lost the quorum
/// (errc::lock_lost) or reached options.max_hold / max_extensions
/// (errc::hold_limit_reached); without options.auto_extend that is never. The request,
/// and so any std::stop_callback registered on `stop`, runs on the client's loop thread
/// before options.on_lost (which is still called), while validity is left: work that
/// polls `stop.stop_requested()` between steps stops in time; stop callbacks must not
/// block.
///
/// Returns the acquisition's error if the lock was not taken (work never runs), else
/// `work`'s return value (Result<void> for void). The release's own outcome is not
/// reported: a release that a quorum does not confirm leaves the keys to expire by their
/// ttl. Must not be called on the client's loop thread (lock() refuses it there).
template <typename Work>
auto with_lock(Client& client, std::string_view key, LockOptions options, Work&& work)
    -> Result<detail::work_result_t<Work>> {
  using R = detail::work_result_t<Work>;
  std::stop_source source;
  // Without auto_extend nothing ends the lock early (and lock() refuses an on_lost).
  if (options.auto_extend) {
    options.on_lost = [source, on_lost = std::move(options.on_lost)](const Error& error) mutable {
      source.request_stop();
      if (on_lost) on_lost(error);
    };
  }
  auto lock = client.lock(key, options);
  if (!lock) return std::move(lock).error();
  struct Release {
    Lock& lock;
    ~Release() { (void)lock.unlock(); }
  } release{*lock};
  if constexpr (std::is_void_v<R>) {
    detail::invoke_work(work, *lock, source.get_token());
    return {};
  } else {
    return detail::invoke_work(work, *lock, source.get_token());
  }
}

}  // namespace redlock

#include "interruptible_lock.hpp"

#include <poll.h>

#include <cerrno>
#include <memory>
#include <mutex>

#include "wakeup.hpp"

namespace redlock::cli {

namespace {

/// Where the loop thread drops the result for the main thread.
struct Mailbox {
  std::mutex mutex;
  std::optional<Result<Lock>> result;  // guarded by mutex
  bool abandoned = false;              // guarded by mutex
  Wakeup ready;
};

Acquisition attempt(const StartAcquire& start, LockOptions options, SignalWatch& signals) {
  auto mailbox = std::make_shared<Mailbox>();
  start(std::move(options), [mailbox](Result<Lock> result) {
    {
      std::lock_guard guard(mailbox->mutex);
      if (!mailbox->abandoned) {
        mailbox->result.emplace(std::move(result));
        mailbox->ready.notify();
        return;
      }
    }
    // Nobody waits for it any more. A Lock destroyed here, on the loop thread, starts its
    // release without waiting for it.
  });

  pollfd watched[2] = {{signals.fd(), POLLIN, 0}, {mailbox->ready.fd(), POLLIN, 0}};
  for (;;) {
    if (::poll(watched, 2, -1) < 0 && errno != EINTR) {
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    while (auto info = signals.next()) {
      if (info->ssi_signo == SIGCHLD) continue;
      std::optional<Result<Lock>> late;
      {
        std::lock_guard guard(mailbox->mutex);
        mailbox->abandoned = true;
        late = std::move(mailbox->result);
      }
      if (late && *late) (void)(*late)->unlock();
      return Acquisition{std::nullopt, static_cast<int>(info->ssi_signo)};
    }
    std::lock_guard guard(mailbox->mutex);
    if (mailbox->result) return Acquisition{std::move(mailbox->result), 0};
  }
}

}  // namespace

Acquisition acquire_interruptibly(const StartAcquire& start, LockOptions options,
                                  SignalWatch& signals) {
  // An endless wait starts with one attempt of its own: a quorum unreachable then is far
  // likelier a mistyped node list than an outage, and waiting for ever on it would hang
  // silently. A bounded wait (--wait) covers an outage as well as a holder, as flock -w
  // waits through a busy file server; --fail-fast gives up on one at once.
  if (options.wait == std::chrono::milliseconds::max() && !options.fail_fast) {
    LockOptions once = options;
    once.wait = std::chrono::milliseconds(0);
    auto first = attempt(start, std::move(once), signals);
    const bool unreachable =
        first.result && !*first.result && first.result->error() == errc::quorum_unreachable;
    if (first.interrupted_by != 0 || unreachable || (first.result && *first.result)) return first;
  }
  return attempt(start, std::move(options), signals);
}

Acquisition lock_interruptibly(Client& client, std::string_view key, LockOptions options,
                               SignalWatch& signals) {
  return acquire_interruptibly(
      [&client, key](LockOptions chosen, Client::LockCallback done) {
        client.lock_async(key, std::move(chosen), std::move(done));
      },
      std::move(options), signals);
}

}  // namespace redlock::cli

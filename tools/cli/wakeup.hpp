#pragma once
// A file descriptor that another thread makes readable: how the client's loop thread
// (which must never block) tells the main thread, waiting in poll(), that something
// happened.

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <system_error>

namespace redlock::cli {

class Wakeup {
 public:
  Wakeup() : fd_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "eventfd");
  }
  ~Wakeup() { ::close(fd_); }
  Wakeup(const Wakeup&) = delete;
  Wakeup& operator=(const Wakeup&) = delete;

  int fd() const noexcept { return fd_; }

  /// Async-signal-safe and non-blocking; may be called from any thread.
  void notify() noexcept {
    const std::uint64_t one = 1;
    (void)!::write(fd_, &one, sizeof one);
  }

  /// Consumes the notifications so the descriptor stops being readable.
  void drain() noexcept {
    std::uint64_t count = 0;
    (void)!::read(fd_, &count, sizeof count);
  }

 private:
  int fd_;
};

}  // namespace redlock::cli

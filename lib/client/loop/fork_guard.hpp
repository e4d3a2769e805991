#pragma once
// Which process an object that owns a loop was made in. After fork() the child has a
// copy of the loop, of its sockets and of its epoll descriptor, but not of its thread;
// and the sockets and the epoll set are the parent's own: a write goes out on the
// parent's connection, a read takes a reply the parent waits for, an epoll_ctl changes
// the parent's set. So in a child nothing may touch them, not even with a libuv call
// that closes them: calls fail with message(), and destructors leave what they own behind
// (leak()).

#include <sys/types.h>

#include <memory>
#include <string>
#include <string_view>

namespace redlock::detail {

class ForkGuard {
 public:
  /// Records the process it is made in.
  ForkGuard() noexcept;

  /// True in a child process forked (fork()) from the one that made this object, and in
  /// that child's children. A relaxed load of a counter that a pthread_atfork handler
  /// increments in every child: getpid() is a system call (glibc does not cache it), about
  /// 0.4 us, which every synchronous call would pay several times.
  bool forked() const noexcept;

  /// "<what>: this <owner> was created in process 123 and is used in process 456 after
  /// fork(); create a new <owner> in the child" (the message of an errc::invalid_argument).
  std::string message(std::string_view what, std::string_view owner) const;

  /// Keeps `object` alive for good: in a child, destroying what the parent's loop owns
  /// would close the parent's handles (libuv calls on its descriptors) or wait for a
  /// thread that does not exist there.
  template <typename T>
  static void leak(std::shared_ptr<T> object) {
    (void)new std::shared_ptr<T>(std::move(object));
  }

 private:
  // In this order: the handler is registered before the count is read, so a fork in
  // between is counted.
  pid_t pid_;
  bool counted_;
  unsigned long generation_;
};

}  // namespace redlock::detail

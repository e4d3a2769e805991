#include "signal_watch.hpp"

#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>

namespace redlock::cli {

SignalWatch::SignalWatch(std::initializer_list<int> signals) {
  sigemptyset(&watched_);
  for (int signo : signals) sigaddset(&watched_, signo);
  if (int error = pthread_sigmask(SIG_BLOCK, &watched_, nullptr); error != 0) {
    throw std::system_error(error, std::generic_category(), "pthread_sigmask");
  }
  fd_ = ::signalfd(-1, &watched_, SFD_CLOEXEC | SFD_NONBLOCK);
  if (fd_ < 0) {
    throw std::system_error(errno, std::generic_category(), "signalfd");
  }
}

SignalWatch::~SignalWatch() {
  ::close(fd_);
}

std::optional<signalfd_siginfo> SignalWatch::next() {
  signalfd_siginfo info{};
  const auto n = ::read(fd_, &info, sizeof info);
  if (n != static_cast<ssize_t>(sizeof info)) return std::nullopt;
  return info;
}

}  // namespace redlock::cli

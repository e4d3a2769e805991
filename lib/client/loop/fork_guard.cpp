#include "client/loop/fork_guard.hpp"

#include <pthread.h>
#include <unistd.h>

#include <atomic>

namespace redlock::detail {

namespace {

// The number of fork()s between the first process and this one. Only a child's own
// handler writes it, with no other thread in the child yet, so relaxed suffices.
std::atomic<unsigned long> forks{0};

void count_fork() noexcept {
  forks.fetch_add(1, std::memory_order_relaxed);
}

// Registered by the first guard, before any object it guards exists: a fork before that
// has nothing to protect. False if pthread_atfork failed (out of memory): getpid() then.
bool counting() noexcept {
  static const bool registered = ::pthread_atfork(nullptr, nullptr, &count_fork) == 0;
  return registered;
}

}  // namespace

ForkGuard::ForkGuard() noexcept
    : pid_(::getpid()), counted_(counting()), generation_(forks.load(std::memory_order_relaxed)) {}

bool ForkGuard::forked() const noexcept {
  if (!counted_) [[unlikely]]
    return ::getpid() != pid_;
  return forks.load(std::memory_order_relaxed) != generation_;
}

std::string ForkGuard::message(std::string_view what, std::string_view owner) const {
  return std::string(what) + ": this " + std::string(owner) + " was created in process " +
         std::to_string(pid_) + " and is used in process " + std::to_string(::getpid()) +
         " after fork(); create a new " + std::string(owner) + " in the child";
}

}  // namespace redlock::detail

#include "child_supervisor.hpp"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <string>
#include <system_error>

#include "report.hpp"
#include "signal_names.hpp"

namespace redlock::cli {

namespace {

std::string quoted(const std::string& key) {
  return "\"" + key + "\"";
}

/// Signals raised by the terminal (Ctrl-C, hang-up) reach the whole foreground process
/// group, the command included; forwarding them as well would deliver them twice, and
/// many programs take a second SIGINT as "stop cleaning up, exit now".
bool already_delivered_to_child(const signalfd_siginfo& info) {
  return info.ssi_code == SI_KERNEL;
}

}  // namespace

ChildOutcome supervise(ChildProcess& child, const Lock& lock, SignalWatch& signals,
                       LostNotice& lost, int lost_signal, int quorum) {
  ChildOutcome outcome;
  auto declare_lost = [&](const std::string& why) {
    outcome.lost = true;
    child.signal(lost_signal);
    // How much validity was left when the command was told shows that it was told in
    // time: before anyone else could have been granted the lock.
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(
        lock.valid_until() - std::chrono::steady_clock::now());
    std::string message = why + "; sent " + signal_name(lost_signal) + " to the command (pid " +
                          std::to_string(child.pid()) + ")";
    if (left.count() > 0)
      message += " with " + std::to_string(left.count()) + " ms of validity left";
    report(message);
  };

  pollfd watched[2] = {{signals.fd(), POLLIN, 0}, {lost.fd(), POLLIN, 0}};
  for (;;) {
    int timeout = -1;
    // Once the watchdog marks the lock lost, its notice (with the nodes' reasons) is on
    // its way; wait for that rather than reporting a bare expiry.
    if (!outcome.lost && !lock.lost()) {
      // Without a failed extension we would still not know the lock is gone when its
      // validity simply ends (no auto-extension, or a loop thread starved of CPU).
      const auto left = lock.validity().count();
      if (left <= 0) {
        declare_lost("lock " + quoted(lock.resource()) +
                     " expired while the command was still running");
        continue;
      }
      timeout = static_cast<int>(std::min<long long>(left, INT_MAX));
    }
    if (::poll(watched, 2, timeout) < 0 && errno != EINTR) {
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    // The lost notice first: a command that exits at the same moment still exits after
    // the lock was gone, and must not be reported as a clean run.
    if (watched[1].revents != 0) {
      if (auto error = lost.take(); error && !outcome.lost) {
        report_failure("lock " + quoted(lock.resource()), *error, quorum);
        declare_lost("lock " + quoted(lock.resource()) + " lost while the command was running");
      }
    }
    while (auto info = signals.next()) {
      if (info->ssi_signo == SIGCHLD) {
        if (auto status = child.try_reap()) {
          outcome.wait_status = *status;
          return outcome;
        }
        continue;
      }
      if (info->ssi_signo == SIGINT || info->ssi_signo == SIGTERM) {
        outcome.stop_signal = static_cast<int>(info->ssi_signo);
      }
      if (!already_delivered_to_child(*info)) child.signal(static_cast<int>(info->ssi_signo));
    }
  }
}

}  // namespace redlock::cli

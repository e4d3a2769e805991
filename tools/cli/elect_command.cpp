// redlock elect: campaign for leadership of KEY, run the command while leading, signal it
// when the leadership is lost, resign when it exits; and, unless --once, campaign again.

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <memory>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <system_error>
#include <vector>

#include <redlock/election.hpp>

#include "child_process.hpp"
#include "child_supervisor.hpp"
#include "exit_codes.hpp"
#include "lost_notice.hpp"
#include "report.hpp"
#include "signal_names.hpp"
#include "signal_watch.hpp"
#include "subcommands.hpp"
#include "wakeup.hpp"

namespace redlock::cli {

namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// The pause before campaigning again after a short leadership or a failed campaign:
// doubling from the first to the last, reset once a leadership lasted a whole TTL.
constexpr milliseconds first_backoff{250};
constexpr milliseconds last_backoff{10'000};

struct ElectArguments {
  std::string key;
  std::vector<std::string> command;
  std::string id;
  bool once = false;
  std::string lost_signal = "TERM";
};

std::string default_identity() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  return std::string(host[0] != '\0' ? host : "localhost") + ":" + std::to_string(::getpid());
}

bool sigpipe_at_default() {
  struct sigaction current {};
  return ::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL;
}

struct Campaign {
  std::optional<Result<Leadership>> result;
  int interrupted_by = 0;  ///< The signal that ended the wait (0 when none did).
};

/// Election::campaign_async(), returning early when any watched signal but SIGCHLD
/// arrives (the campaign is then stopped, and a leadership won meanwhile resigned).
Campaign campaign_once(Election& election, milliseconds wait, SignalWatch& signals) {
  struct Mailbox {
    std::mutex mutex;
    std::optional<Result<Leadership>> result;  // guarded by mutex
    bool abandoned = false;                    // guarded by mutex
    Wakeup ready;
  };
  auto mailbox = std::make_shared<Mailbox>();
  std::stop_source stop;
  election.campaign_async(stop.get_token(), wait, [mailbox](Result<Leadership> result) {
    std::lock_guard guard(mailbox->mutex);
    // Abandoned: the leadership is destroyed here, on the loop thread, which resigns it
    // without waiting.
    if (mailbox->abandoned) return;
    mailbox->result.emplace(std::move(result));
    mailbox->ready.notify();
  });
  pollfd watched[2] = {{signals.fd(), POLLIN, 0}, {mailbox->ready.fd(), POLLIN, 0}};
  for (;;) {
    if (::poll(watched, 2, -1) < 0 && errno != EINTR) {
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    while (auto info = signals.next()) {
      if (info->ssi_signo == SIGCHLD) continue;
      stop.request_stop();
      std::optional<Result<Leadership>> late;
      {
        std::lock_guard guard(mailbox->mutex);
        mailbox->abandoned = true;
        late = std::move(mailbox->result);
      }
      if (late && *late) (void)(*late)->resign();
      return Campaign{std::nullopt, static_cast<int>(info->ssi_signo)};
    }
    std::lock_guard guard(mailbox->mutex);
    if (mailbox->result) return Campaign{std::move(mailbox->result), 0};
  }
}

/// As `run` does for a lock: an endless wait starts with one attempt of its own, so that
/// a quorum unreachable at the start (a mistyped node list, far likelier than an outage)
/// is reported at once instead of hanging silently.
Campaign campaign(Election& election, SignalWatch& signals) {
  auto first = campaign_once(election, milliseconds(0), signals);
  if (first.interrupted_by != 0 || !first.result || first.result->has_value() ||
      first.result->error() != errc::conflict) {
    return first;
  }
  return campaign_once(election, milliseconds::max(), signals);
}

/// Sleeps `delay` unless SIGINT, SIGTERM or SIGHUP comes first: that signal, or 0.
int pause_for(milliseconds delay, SignalWatch& signals) {
  const auto until = Clock::now() + delay;
  pollfd watched{signals.fd(), POLLIN, 0};
  for (;;) {
    const auto left = std::chrono::ceil<milliseconds>(until - Clock::now()).count();
    if (left <= 0) return 0;
    if (::poll(&watched, 1, static_cast<int>(std::min<long long>(left, INT_MAX))) < 0 &&
        errno != EINTR) {
      throw std::system_error(errno, std::generic_category(), "poll");
    }
    while (auto info = signals.next()) {
      if (info->ssi_signo != SIGCHLD) return static_cast<int>(info->ssi_signo);
    }
  }
}

int elect(const GlobalOptions& globals, const ElectArguments& args) {
  if (args.command.empty()) {
    throw UsageError("elect: no command given (redlock elect KEY -- COMMAND [ARGS...])");
  }
  const int lost_signal = parse_signal(args.lost_signal);
  const std::string identity = args.id.empty() ? default_identity() : args.id;
  if (identity.find_first_of("\r\n") != std::string::npos) {
    throw UsageError("elect: --id must not contain a line break");
  }
  std::vector<int> reset_in_child;
  if (sigpipe_at_default()) reset_in_child.push_back(SIGPIPE);
  // Before the client: its loop thread inherits the blocked mask.
  SignalWatch signals({SIGINT, SIGTERM, SIGHUP, SIGCHLD});
  auto client = globals.make_client();
  Election election(client, args.key, identity, globals.ttl_ms());
  const std::string what = "elect \"" + args.key + "\"";

  milliseconds backoff = first_backoff;
  auto back_off = [&]() {
    const int signo = pause_for(backoff, signals);
    backoff = std::min(backoff * 2, last_backoff);
    return signo;
  };
  for (;;) {
    auto campaigned = campaign(election, signals);
    if (campaigned.interrupted_by != 0) {
      report(what + ": interrupted by " + signal_name(campaigned.interrupted_by) +
             " while campaigning");
      return 128 + campaigned.interrupted_by;
    }
    auto& won = *campaigned.result;
    if (!won) {
      report_failure(what, won.error(), client->quorum());
      if (args.once || won.error() == errc::invalid_argument) return exit_code_for(won.error());
      if (const int signo = back_off()) return 128 + signo;
      continue;
    }
    Leadership leadership = std::move(*won);
    const auto began = Clock::now();
    report(what + ": leading as \"" + identity + "\", term " + std::to_string(leadership.term()));

    ChildProcess::Environment environment = {{"REDLOCK_KEY", args.key},
                                             {"REDLOCK_TERM", std::to_string(leadership.term())},
                                             {"REDLOCK_LEADER_ID", identity},
                                             {"REDLOCK_VALUE", leadership.lock().value()}};
    // Variables of an outer `redlock run` belong to another lock.
    const std::vector<std::string> unset = {"REDLOCK_TOKEN", "REDLOCK_TOKENS"};
    std::optional<ChildProcess> child;
    try {
      child = ChildProcess::spawn(args.command, environment, unset, reset_in_child);
    } catch (const std::system_error& e) {
      report("cannot run \"" + args.command.front() + "\": " + e.code().message());
      (void)leadership.resign();
      return e.code().value() == ENOENT ? exit_code::not_found : exit_code::cannot_execute;
    }

    ChildOutcome outcome;
    {
      // Declared after the notice it posts to, so it is deregistered first.
      LostNotice lost;
      std::stop_callback on_lost(leadership.stop_token(), [&lost, &leadership] {
        if (leadership.lost()) {
          lost.post(Error(make_error_code(errc::lock_lost),
                          "leadership lost: the watchdog could not keep a quorum"));
        }
      });
      outcome = supervise(*child, leadership.lock(), signals, lost, lost_signal, client->quorum());
    }
    auto resigned = leadership.resign();
    if (!outcome.lost && !resigned) {
      report_failure("resign \"" + args.key + "\"", resigned.error(), client->quorum());
    }
    if (outcome.stop_signal != 0) return exit_code_of_wait_status(outcome.wait_status);
    if (outcome.lost) {
      if (args.once) return exit_code::lost;
    } else {
      const int code = exit_code_of_wait_status(outcome.wait_status);
      if (args.once || code != 0) return code;
    }
    if (Clock::now() - began >= globals.ttl_ms()) backoff = first_backoff;
    if (const int signo = back_off()) return 128 + signo;
  }
}

}  // namespace

Subcommand add_elect_command(CLI::App& parent, GlobalOptions& globals) {
  auto args = std::make_shared<ElectArguments>();
  auto* app = parent.add_subcommand(
      "elect",
      "Campaign for leadership of KEY and run COMMAND while leading: the command is sent "
      "--lost-signal when the leadership is lost, and the leadership is resigned when the "
      "command exits; then campaign again (unless --once).");
  app->add_option("--id", args->id,
                  "This candidate's identity, which `redlock leader` shows (default: "
                  "hostname:pid)")
      ->type_name("ID");
  app->add_flag("--once", args->once,
                "Lead once: exit with the command's code, or 4 if the leadership was lost");
  app->add_option("--lost-signal", args->lost_signal,
                  "Signal sent to the command when the leadership is lost")
      ->check(signal_validator())
      ->type_name("SIGNAL")
      ->capture_default_str();
  app->add_option("KEY", args->key, "Name of the election")->required();
  app->add_option("COMMAND", args->command, "The command to run and its arguments, after --");
  add_global_options(*app, globals);
  app->footer(
      "The command gets REDLOCK_KEY, REDLOCK_TERM (greater than every earlier leader's: a\n"
      "fencing token), REDLOCK_LEADER_ID and REDLOCK_VALUE. SIGINT, SIGTERM and SIGHUP are\n"
      "forwarded to it; SIGINT or SIGTERM also end the loop once it exited.\n"
      "Without --once, a loss or an exit with code 0 is followed by a new campaign, after a\n"
      "pause of 250ms doubling to 10s (reset by a leadership that lasted a TTL); another\n"
      "exit code ends the loop with that code.\n"
      "A campaign that finds no quorum reachable is retried after the same pause (with\n"
      "--once it ends the run with exit code 3).\n"
      "Exit codes: the command's own (128+N when killed by signal N); 2 usage error;\n"
      "3 quorum unreachable (--once); 4 leadership lost while the command ran (--once);\n"
      "128+N when signal N ended a campaign or a pause.\n"
      "\n"
      "Example:\n"
      "  redlock elect --ttl 10s scheduler -- /usr/local/bin/scheduler");
  return {app, [&globals, args] { return elect(globals, *args); }};
}

}  // namespace redlock::cli

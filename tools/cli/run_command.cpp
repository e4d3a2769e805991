// redlock run: a distributed flock(1). Take the lock, run the command while keeping the
// lock extended, release it when the command exits, and exit with the command's code.

#include <signal.h>

#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "child_process.hpp"
#include "child_supervisor.hpp"
#include "duration.hpp"
#include "exit_codes.hpp"
#include "interruptible_lock.hpp"
#include "lost_notice.hpp"
#include "report.hpp"
#include "signal_names.hpp"
#include "signal_watch.hpp"
#include "subcommands.hpp"

namespace redlock::cli {

namespace {

using std::chrono::milliseconds;

// flock(1) waits for as long as it takes unless told otherwise; so does run.
constexpr milliseconds wait_forever = milliseconds::max();

struct RunArguments {
  std::string key;
  std::vector<std::string> command;
  std::string wait;
  bool nonblock = false;
  bool fencing = false;
  bool no_extend = false;
  bool quiet = false;
  bool fail_fast = false;
  int conflict_exit_code = exit_code::conflict;
  std::string lost_signal = "TERM";
  bool shared = false;
  bool exclusive = false;
  int permits = 0;
  std::vector<std::string> also;
};

/// The acquisition `args` ask for: a plain lock, a read or write hold (--shared,
/// --exclusive), a semaphore permit (--permits) or a key set (--also).
StartAcquire acquisition_of(Client& client, const RunArguments& args) {
  if (args.shared || args.exclusive) {
    const bool writer = args.exclusive;
    return [&client, &args, writer](LockOptions options, Client::LockCallback done) {
      if (writer) return client.write_lock_async(args.key, std::move(options), std::move(done));
      client.read_lock_async(args.key, std::move(options), std::move(done));
    };
  }
  if (args.permits > 0) {
    return [&client, &args](LockOptions options, Client::LockCallback done) {
      client.acquire_permit_async(args.key, {.permits = args.permits, .lock = std::move(options)},
                                  std::move(done));
    };
  }
  if (!args.also.empty()) {
    auto keys = std::make_shared<std::vector<std::string>>();
    keys->push_back(args.key);
    keys->insert(keys->end(), args.also.begin(), args.also.end());
    return [&client, keys](LockOptions options, Client::LockCallback done) {
      client.lock_all_async(*keys, std::move(options), std::move(done));
    };
  }
  return [&client, &args](LockOptions options, Client::LockCallback done) {
    client.lock_async(args.key, std::move(options), std::move(done));
  };
}

// The number of nodes this run's kind needs, as its failures report it: a semaphore's
// K permits need more than a majority (Client::semaphore_quorum).
int quorum_of(const Client& client, const RunArguments& args) {
  if (args.permits > 0) {
    if (auto quorum = client.semaphore_quorum(args.permits)) return *quorum;
  }
  return client.quorum();
}

bool sigpipe_at_default() {
  struct sigaction current {};
  return ::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL;
}

int run(const GlobalOptions& globals, const RunArguments& args) {
  if (args.command.empty()) {
    throw UsageError("run: no command given (redlock run KEY -- COMMAND [ARGS...])");
  }
  const int lost_signal = parse_signal(args.lost_signal);
  LockOptions options;
  options.ttl = globals.ttl_ms();
  options.wait = args.nonblock       ? milliseconds(0)
                 : args.wait.empty() ? wait_forever
                                     : parse_duration(args.wait);
  options.fencing = args.fencing;
  options.fail_fast = args.fail_fast;
  options.auto_extend = !args.no_extend;
  auto lost = std::make_shared<LostNotice>();
  if (options.auto_extend) options.on_lost = [lost](const Error& error) { lost->post(error); };

  // The library ignores SIGPIPE (a write to a closed socket must not kill us), and an
  // ignored signal survives exec; a command such as `yes | head` needs it back. Looked at
  // before the client exists, so a SIGPIPE the user chose to ignore stays ignored.
  std::vector<int> reset_in_child;
  if (sigpipe_at_default()) reset_in_child.push_back(SIGPIPE);
  // Declared before the client: its loop thread must inherit the blocked mask, and the
  // watch must outlive every use of the client.
  SignalWatch signals({SIGINT, SIGTERM, SIGHUP, SIGCHLD});
  auto client = globals.make_client();

  auto acquisition =
      acquire_interruptibly(acquisition_of(*client, args), std::move(options), signals);
  if (acquisition.interrupted_by != 0) {
    report("run \"" + args.key + "\": interrupted by " + signal_name(acquisition.interrupted_by) +
           " while waiting for the lock");
    return 128 + acquisition.interrupted_by;
  }
  auto& acquired = *acquisition.result;
  if (!acquired) {
    if (!(args.quiet && acquired.error() == errc::conflict)) {
      report_failure("run \"" + args.key + "\"", acquired.error(), quorum_of(*client, args));
    }
    return exit_code_for(acquired.error(), args.conflict_exit_code);
  }
  Lock lock = std::move(*acquired);

  ChildProcess::Environment environment = {{"REDLOCK_KEY", args.key},
                                           {"REDLOCK_VALUE", lock.value()}};
  std::vector<std::string> unset;
  if (auto token = lock.fencing_token(args.key)) {
    environment.emplace_back("REDLOCK_TOKEN", std::to_string(*token));
  } else {
    // A token inherited from an outer `redlock run` belongs to another lock.
    unset.push_back("REDLOCK_TOKEN");
  }
  if (!args.also.empty() && args.fencing) {
    // A key set: every key's own token, in the order KEY, then the --also keys.
    std::string tokens;
    for (const auto& key : lock.resources()) {
      if (!tokens.empty()) tokens += ' ';
      tokens += std::to_string(lock.fencing_token(key).value_or(0));
    }
    environment.emplace_back("REDLOCK_TOKENS", std::move(tokens));
  } else {
    unset.push_back("REDLOCK_TOKENS");
  }
  std::optional<ChildProcess> child;
  try {
    child = ChildProcess::spawn(args.command, environment, unset, reset_in_child);
  } catch (const std::system_error& e) {
    report("cannot run \"" + args.command.front() + "\": " + e.code().message());
    (void)lock.unlock();
    return e.code().value() == ENOENT ? exit_code::not_found : exit_code::cannot_execute;
  }

  const auto outcome =
      supervise(*child, lock, signals, *lost, lost_signal, quorum_of(*client, args));
  auto released = lock.unlock();
  if (outcome.lost) return exit_code::lost;
  if (!released) {
    // The command ran under the lock; a release that did not reach a quorum only
    // leaves the lock to expire by its TTL, so the command's code still stands.
    report_failure("release \"" + args.key + "\"", released.error(), quorum_of(*client, args));
  }
  return exit_code_of_wait_status(outcome.wait_status);
}

}  // namespace

Subcommand add_run_command(CLI::App& parent, GlobalOptions& globals) {
  auto args = std::make_shared<RunArguments>();
  auto* app = parent.add_subcommand(
      "run",
      "Run COMMAND while holding the lock KEY: the lock is kept extended while the command "
      "runs and released when it exits; exits with the command's exit code.");
  auto* wait = app->add_option("--wait", args->wait,
                               "Give up after waiting this long for the lock (default: wait "
                               "until it is free, but exit 3 if no quorum of nodes is reachable "
                               "at the start). The wait covers outages too: while no quorum is "
                               "reachable, attempts back off to once a second (see --fail-fast)")
                   ->check(duration_check())
                   ->type_name("DURATION");
  app->add_flag("--nonblock,-n", args->nonblock,
                "Do not wait: exit 1 at once when the lock is held")
      ->excludes(wait);
  app->add_flag("--fail-fast", args->fail_fast,
                "Exit 3 at the first attempt that finds no quorum of nodes reachable, instead "
                "of waiting through the outage (a held lock is still waited for)");
  app->add_flag("--fencing", args->fencing,
                "Pass a fencing token (greater than every earlier holder's) in REDLOCK_TOKEN "
                "(KEY's); with --also, every key's in REDLOCK_TOKENS");
  app->add_flag("--no-extend", args->no_extend,
                "Do not extend the lock: the command gets --lost-signal if it outlives the TTL");
  app->add_flag("--quiet,-q", args->quiet,
                "Say nothing when the lock is held by another owner (a cron job on many "
                "hosts would otherwise mail it every time)");
  app->add_option("--conflict-exit-code", args->conflict_exit_code,
                  "Exit code when the lock is held by another owner")
      ->type_name("CODE")
      ->check(CLI::Range(0, 255))
      ->capture_default_str();
  app->add_option("--lost-signal", args->lost_signal,
                  "Signal sent to the command when the lock is lost")
      ->check(signal_validator())
      ->type_name("SIGNAL")
      ->capture_default_str();
  auto* shared =
      app->add_flag("--shared,-s", args->shared,
                    "Take KEY as a read-write lock, shared with other --shared holders (flock -s)");
  auto* exclusive = app->add_flag(
      "--exclusive,-x", args->exclusive,
      "Take KEY as a read-write lock, excluding --shared and --exclusive holders (flock -x); "
      "a waiting writer keeps new readers out");
  auto* permits = app->add_option("--permits", args->permits,
                                  "Take one of K permits of the counting semaphore KEY")
                      ->type_name("K")
                      ->check(CLI::Range(1, 1'000'000));
  auto* also = app->add_option("--also", args->also,
                               "Also lock this key (repeatable): KEY and every --also key are "
                               "locked as one, all or none")
                   ->type_name("KEY")
                   ->allow_extra_args(false);  // one key per --also: KEY follows
  shared->excludes(exclusive)->excludes(permits)->excludes(also);
  exclusive->excludes(permits)->excludes(also);
  permits->excludes(also);
  app->add_option("KEY", args->key, "Name of the lock")->required();
  app->add_option("COMMAND", args->command, "The command to run and its arguments, after --");
  add_global_options(*app, globals);
  app->footer(
      "The command gets REDLOCK_KEY, REDLOCK_VALUE and, with --fencing, REDLOCK_TOKEN (with\n"
      "--also also REDLOCK_TOKENS: one token per key, KEY first, space-separated).\n"
      "KEY is an exclusive lock unless --shared/--exclusive (a read-write lock), --permits\n"
      "(a semaphore) or --also (a key set) say otherwise; a key serves one kind of lock.\n"
      "SIGINT, SIGTERM and SIGHUP are forwarded to it.\n"
      "Exit codes: the command's own (128+N when killed by signal N); 1 lock held by "
      "another;\n2 usage error; 3 quorum unreachable; 4 lock lost while the command ran.\n"
      "\n"
      "Example:\n"
      "  redlock --nodes redis://10.0.0.1:6379,redis://10.0.0.2:6379,redis://10.0.0.3:6379 \\\n"
      "    run --nonblock --ttl 1m nightly-backup -- /usr/local/bin/backup --full");
  return {app, [&globals, args] { return run(globals, *args); }};
}

}  // namespace redlock::cli

// redlock: a distributed flock(1) over N independent Redis masters.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include <redlock/version.hpp>

#include "exit_codes.hpp"
#include "global_options.hpp"
#include "report.hpp"
#include "subcommands.hpp"

namespace {

using namespace redlock::cli;

/// The "Usage: ..." line of the help of `app`, or of the subcommand given on the
/// command line.
std::string usage_line(const CLI::App& app) {
  const auto help = app.help();
  const auto start = help.find("Usage:");
  if (start == std::string::npos) return {};
  return help.substr(start, help.find('\n', start) - start);
}

std::string help_hint(const CLI::App& app) {
  auto selected = app.get_subcommands();
  const std::string name = selected.empty() ? "redlock" : "redlock " + selected.front()->get_name();
  return "Run '" + name + " --help' for more.";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("redlock " REDLOCK_VERSION_STRING
               ": a distributed flock(1), one lock held by a majority of N independent "
               "Redis masters (the Redlock algorithm).",
               "redlock");
  // The version of the tool, and of the library it loaded when that is another (a
  // shared libredlock may come from another build than the tool).
  std::string version = "redlock " REDLOCK_VERSION_STRING;
  if (std::string_view(redlock::version()) != REDLOCK_VERSION_STRING) {
    version += std::string("\nlibredlock ") + redlock::version() + " (loaded)";
  }
  app.set_version_flag("-V,--version", version, "Print the version and exit");
  // Every subcommand's options on one page: what the man page redlock(1) is made from.
  app.set_help_all_flag("--help-all", "Print the help of every subcommand and exit");
  GlobalOptions globals;
  add_global_options(app, globals);
  std::vector<Subcommand> subcommands = {
      add_run_command(app, globals),     add_acquire_command(app, globals),
      add_release_command(app, globals), add_extend_command(app, globals),
      add_status_command(app, globals),  add_elect_command(app, globals),
      add_leader_command(app, globals),
  };
  app.require_subcommand(1);
  app.footer(
      "Durations take a unit: 250ms, 10s, 2m, 1h.\n"
      "\n"
      "Exit status:\n"
      "  0    ok\n"
      "  1    the lock is held by another owner (release, extend: VALUE does not hold it)\n"
      "  2    usage error: bad flags, a malformed node URL or duration\n"
      "  3    quorum unreachable: too many nodes down, slow or erroring, or guarded\n"
      "  4    run, elect --once: the lock or leadership was lost while the command ran\n"
      "run and elect otherwise exit with their command's code, or 128+N when signal N\n"
      "ended it. leader exits 1 when nobody leads.\n"
      "\n"
      "Examples:\n"
      "A cron job that must not run twice at once, anywhere:\n"
      "  REDLOCK_NODES=redis://n1:6379,redis://n2:6379,redis://n3:6379 \\\n"
      "    redlock run --nonblock reports -- /usr/local/bin/make-reports\n"
      "One scheduler for the fleet, another host taking over when it fails:\n"
      "  redlock elect --ttl 10s scheduler -- /usr/local/bin/scheduler\n"
      "\n"
      "Members that may have lost their keys: each invocation is a new client that never\n"
      "sees a node restart, so by default a node up for less than --longest-ttl (the\n"
      "longer of --ttl and 30s) does not count. Right after a whole fleet starts fresh\n"
      "every lock is therefore refused (exit 3, 'guarded') for that long; pass\n"
      "--no-guard-young-members to a fleet started on purpose just now.\n"
      "\n"
      "Environment:\n"
      "  REDLOCK_NODES   the node URLs, comma-separated, when --nodes is not given\n"
      "  REDLOCK_SENTINEL_USERNAME, REDLOCK_SENTINEL_PASSWORD\n"
      "                  credentials for the sentinels of redis-sentinel:// nodes\n"
      "  REDLOCK_KEY     set by run for its command: the lock's key\n"
      "  REDLOCK_VALUE   set by run for its command: the lock's value\n"
      "  REDLOCK_TOKEN   set by run --fencing: the fencing token of KEY\n"
      "  REDLOCK_TOKENS  set by run --fencing --also: one token per key, KEY first\n"
      "  REDLOCK_TERM    set by elect: the leader's term (a fencing token of KEY)\n"
      "  REDLOCK_LEADER_ID\n"
      "                  set by elect: the leader's identity (--id)\n"
      "\n"
      "The man page redlock(1) holds every subcommand's help ('redlock --help-all').");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return exit_code::ok;
  } catch (const CLI::CallForAllHelp&) {
    std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout);
    return exit_code::ok;
  } catch (const CLI::CallForVersion& e) {
    std::printf("%s\n", e.what());
    return exit_code::ok;
  } catch (const CLI::ParseError& e) {
    report(e.what());
    std::fprintf(stderr, "%s\n%s\n", usage_line(app).c_str(), help_hint(app).c_str());
    return exit_code::usage;
  }

  for (const auto& subcommand : subcommands) {
    if (!subcommand.app->parsed()) continue;
    try {
      return subcommand.run();
    } catch (const UsageError& e) {
      report(e.what());
      std::fprintf(stderr, "%s\n", help_hint(app).c_str());
      return exit_code::usage;
    } catch (const std::exception& e) {
      report(e.what());
      return exit_code::unreachable;
    }
  }
  return exit_code::usage;  // unreachable: require_subcommand(1)
}

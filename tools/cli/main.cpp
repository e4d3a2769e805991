// redlock: a distributed flock(1) over N independent Redis masters.

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

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
  CLI::App app(
      "A distributed flock(1): one lock held by a majority of N independent Redis "
      "masters (the Redlock algorithm).",
      "redlock");
  GlobalOptions globals;
  add_global_options(app, globals);
  std::vector<Subcommand> subcommands = {
      add_run_command(app, globals),     add_acquire_command(app, globals),
      add_release_command(app, globals), add_extend_command(app, globals),
      add_status_command(app, globals),
  };
  app.require_subcommand(1);
  app.footer(
      "Durations take a unit: 250ms, 10s, 2m, 1h.\n"
      "Exit codes: 0 ok; 1 lock held by another; 2 usage error; 3 quorum unreachable;\n"
      "4 lock lost while the command ran (run).\n"
      "\n"
      "Example (a cron job that must not run twice at once, anywhere):\n"
      "  REDLOCK_NODES=redis://10.0.0.1:6379,redis://10.0.0.2:6379,redis://10.0.0.3:6379 \\\n"
      "    redlock run --nonblock reports -- /usr/local/bin/make-reports");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::fputs(app.help().c_str(), stdout);
    return exit_code::ok;
  } catch (const CLI::CallForAllHelp&) {
    std::fputs(app.help("", CLI::AppFormatMode::All).c_str(), stdout);
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

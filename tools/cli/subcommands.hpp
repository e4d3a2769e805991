#pragma once
// The subcommands of `redlock`. Each registers its options on the parent app and returns
// what to do when it was selected; its arguments live as long as the returned action.

#include <CLI/CLI.hpp>
#include <functional>

#include "global_options.hpp"

namespace redlock::cli {

struct Subcommand {
  CLI::App* app;
  /// Runs the selected subcommand and returns the process's exit code. May throw
  /// UsageError.
  std::function<int()> run;
};

Subcommand add_run_command(CLI::App& parent, GlobalOptions& globals);
Subcommand add_acquire_command(CLI::App& parent, GlobalOptions& globals);
Subcommand add_release_command(CLI::App& parent, GlobalOptions& globals);
Subcommand add_extend_command(CLI::App& parent, GlobalOptions& globals);
Subcommand add_status_command(CLI::App& parent, GlobalOptions& globals);
Subcommand add_elect_command(CLI::App& parent, GlobalOptions& globals);
Subcommand add_leader_command(CLI::App& parent, GlobalOptions& globals);

}  // namespace redlock::cli

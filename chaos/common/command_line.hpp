#pragma once
// What the chaos programs' CLI11 command lines share: one exit status for every usage
// error, and durations in the chaos notation (common/duration.hpp).

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <string>

#include "common/duration.hpp"

namespace redlock::chaos {

/// The status of a usage error in every chaos program; the runner and the scripts that
/// start the others tell it apart from a failed run (1).
inline constexpr int usage_error_status = 2;

/// Parses argv into `app`, printing help and exiting 0 on --help, printing the error
/// (CLI11 names the option) and exiting with usage_error_status on anything else wrong.
/// `more_checks` runs after a successful parse and may throw CLI::ValidationError for
/// rules that involve several options, to be reported the same way.
template <typename MoreChecks>
void parse_or_exit(CLI::App& app, int argc, char** argv, MoreChecks more_checks) {
  try {
    app.parse(argc, argv);
    more_checks();
  } catch (const CLI::CallForHelp& help) {
    std::exit(app.exit(help));
  } catch (const CLI::ParseError& error) {
    app.exit(error);
    std::exit(usage_error_status);
  }
}

inline void parse_or_exit(CLI::App& app, int argc, char** argv) {
  parse_or_exit(app, argc, argv, [] {});
}

/// Adds --NAME DURATION bound to `target`, whose current value is shown as the default.
inline CLI::Option* add_duration_option(CLI::App& app, const std::string& name,
                                        std::chrono::milliseconds& target,
                                        const std::string& description) {
  const CLI::Validator is_duration(
      [](std::string& text) -> std::string {
        return parse_duration(text) ? "" : "not a duration: " + text + " (e.g. 250ms, 10s, 2m)";
      },
      "");
  return app
      .add_option_function<std::string>(
          name, [&target](const std::string& text) { target = *parse_duration(text); }, description)
      ->type_name("DURATION")
      ->check(is_duration)
      ->default_str(std::to_string(target.count()) + "ms");
}

}  // namespace redlock::chaos

#pragma once
// Signal names as kill(1) takes them: "TERM", "SIGTERM" or "15".

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

namespace redlock::cli {

/// The signal number. Throws std::invalid_argument naming `text` when it is not a
/// signal that can be sent.
int parse_signal(std::string_view text);

/// "SIGTERM", or "signal 42" for one without a name.
std::string signal_name(int signo);

/// Checks an option's value with parse_signal (--lost-signal of run and elect).
CLI::Validator signal_validator();

}  // namespace redlock::cli

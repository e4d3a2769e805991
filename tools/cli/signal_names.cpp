#include "signal_names.hpp"

#include <cctype>
#include <csignal>
#include <stdexcept>

namespace redlock::cli {

namespace {

struct Named {
  const char* name;
  int signo;
};

constexpr Named signals[] = {
    {"HUP", SIGHUP},   {"INT", SIGINT},   {"QUIT", SIGQUIT}, {"ABRT", SIGABRT},   {"KILL", SIGKILL},
    {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"PIPE", SIGPIPE}, {"ALRM", SIGALRM},   {"TERM", SIGTERM},
    {"CONT", SIGCONT}, {"STOP", SIGSTOP}, {"TSTP", SIGTSTP}, {"WINCH", SIGWINCH}, {"XCPU", SIGXCPU},
};

}  // namespace

int parse_signal(std::string_view text) {
  std::string name;
  for (char c : text) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (name.rfind("SIG", 0) == 0) name.erase(0, 3);
  for (const auto& known : signals) {
    if (name == known.name) return known.signo;
  }
  if (!name.empty() && name.size() <= 3 &&
      name.find_first_not_of("0123456789") == std::string::npos) {
    const int number = std::stoi(name);
    if (number >= 1 && number < NSIG) return number;
  }
  throw std::invalid_argument("\"" + std::string(text) +
                              "\" is not a signal (use a name such as TERM, INT, HUP, "
                              "USR1, KILL, or a number)");
}

std::string signal_name(int signo) {
  for (const auto& known : signals) {
    if (known.signo == signo) return std::string("SIG") + known.name;
  }
  return "signal " + std::to_string(signo);
}

CLI::Validator signal_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        try {
          (void)parse_signal(text);
          return {};
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
      },
      "");
}

}  // namespace redlock::cli

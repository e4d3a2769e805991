// redlock-chaos-check FILE...: reads event records (JSON lines, "-" for stdin) from every
// FILE, checks them together and prints the JSON report on stdout.
// Exit status: 0 safe, 1 a finding (violation, token regression or stale write
// accepted), 2 usage or I/O error. Scenarios that are expected to break mutual exclusion
// read the report rather than the status.

#include <fstream>
#include <iostream>
#include <string>
#include <string_view>

#include "checker/report_json.hpp"
#include "checker/safety_checker.hpp"

namespace {

void add_stream(redlock::chaos::SafetyChecker& checker, std::istream& in) {
  std::string line;
  while (std::getline(in, line)) checker.add_line(line);
}

}  // namespace

int main(int argc, char** argv) {
  int indent = -1;
  redlock::chaos::SafetyChecker checker;
  int files = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--pretty") {
      indent = 2;
      continue;
    }
    if (arg == "-h" || arg == "--help") {
      std::cout << "usage: redlock-chaos-check [--pretty] FILE... (- for stdin)\n";
      return 0;
    }
    ++files;
    if (arg == "-") {
      add_stream(checker, std::cin);
      continue;
    }
    std::ifstream in{std::string(arg)};
    if (!in) {
      std::cerr << "redlock-chaos-check: cannot read " << arg << "\n";
      return 2;
    }
    add_stream(checker, in);
    if (in.bad()) {
      std::cerr << "redlock-chaos-check: error reading " << arg << "\n";
      return 2;
    }
  }
  if (files == 0) {
    std::cerr << "usage: redlock-chaos-check [--pretty] FILE... (- for stdin)\n";
    return 2;
  }
  const auto report = checker.report();
  std::cout << redlock::chaos::to_json(report).dump(indent) << "\n";
  return report.safe() ? 0 : 1;
}

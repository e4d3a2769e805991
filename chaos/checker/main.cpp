// redlock-chaos-check FILE...: reads event records (JSON lines, "-" for stdin) from every
// FILE, checks them together and prints the JSON report on stdout.
// Exit status: 0 safe, 1 a finding (violation, token regression or stale write
// accepted), 2 usage or I/O error. Scenarios that are expected to break mutual exclusion
// read the report rather than the status.

#include <CLI/CLI.hpp>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "checker/report_json.hpp"
#include "checker/safety_checker.hpp"
#include "common/command_line.hpp"

namespace {

void add_stream(redlock::chaos::SafetyChecker& checker, std::istream& in) {
  std::string line;
  while (std::getline(in, line)) checker.add_line(line);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Checks the event records of a chaos run together and prints the JSON report.",
               "redlock-chaos-check"};
  std::vector<std::string> files;
  bool pretty = false;
  app.add_option("FILE", files, "Event records, JSON lines (- for stdin)")->required();
  app.add_flag("--pretty", pretty, "Indent the report");
  app.footer(
      "Exit status: 0 safe, 1 a finding (violation, token regression or stale write "
      "accepted), 2 usage or I/O error.");
  redlock::chaos::parse_or_exit(app, argc, argv);

  redlock::chaos::SafetyChecker checker;
  for (const std::string& file : files) {
    if (file == "-") {
      add_stream(checker, std::cin);
      continue;
    }
    std::ifstream in{file};
    if (!in) {
      std::cerr << "redlock-chaos-check: cannot read " << file << "\n";
      return 2;
    }
    add_stream(checker, in);
    if (in.bad()) {
      std::cerr << "redlock-chaos-check: error reading " << file << "\n";
      return 2;
    }
  }
  const auto report = checker.report();
  std::cout << redlock::chaos::to_json(report).dump(pretty ? 2 : -1) << "\n";
  return report.safe() ? 0 : 1;
}

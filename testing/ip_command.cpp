#include "ip_command.hpp"

#include "executable_path.hpp"

namespace redlock::testing::detail {

std::string ip_binary() {
  static const std::string found = [] {
    if (std::string on_path = find_on_path("ip"); !on_path.empty()) return on_path;
    for (const char* path : {"/usr/sbin/ip", "/sbin/ip", "/bin/ip"}) {
      if (is_executable(path)) return std::string(path);
    }
    return std::string();
  }();
  return found;
}

Finished try_ip(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {ip_binary()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_to_end(argv);
}

Finished try_ip_batch(const std::string& ns, const std::vector<std::string>& lines) {
  // Without input, `ip -batch -` would read the test's own stdin.
  if (lines.empty()) return {};
  std::vector<std::string> argv = {ip_binary()};
  if (!ns.empty()) argv.insert(argv.end(), {"-n", ns});
  argv.insert(argv.end(), {"-batch", "-"});
  std::string input;
  for (const auto& line : lines) input += line + "\n";
  return run_to_end(argv, {}, input);
}

}  // namespace redlock::testing::detail

#include "ip_command.hpp"

#include <stdexcept>

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

void ip(const std::vector<std::string>& args) {
  const Finished done = try_ip(args);
  if (done.ok()) return;
  std::string command = "ip";
  for (const auto& arg : args) command += " " + arg;
  throw std::runtime_error(command + " failed: " + done.output);
}

}  // namespace redlock::testing::detail

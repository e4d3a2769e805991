#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include <redlock/testing/redis_binary.hpp>

namespace redlock::testing {
namespace {

bool is_executable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::string redis_server_binary() {
  if (const char* chosen = std::getenv("REDLOCK_REDIS_SERVER"); chosen && *chosen) {
    if (!is_executable(chosen)) {
      throw std::runtime_error(std::string("REDLOCK_REDIS_SERVER is ") + chosen +
                               ", which is not an executable file");
    }
    return chosen;
  }
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (dir.empty()) dir = ".";
    if (std::string candidate = dir + "/redis-server"; is_executable(candidate)) return candidate;
    start = end + 1;
  }
  throw std::runtime_error(
      "redis-server not found on PATH (Debian: apt-get install redis-server), and "
      "REDLOCK_REDIS_SERVER is not set: redlock::testing runs real Redis servers");
}

}  // namespace redlock::testing

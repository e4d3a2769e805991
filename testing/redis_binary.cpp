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

// $<variable> when set (it must then name an executable), else the first `name` on $PATH.
std::string find_binary(const char* variable, const char* name, const char* package,
                        const char* why) {
  if (const char* chosen = std::getenv(variable); chosen && *chosen) {
    if (!is_executable(chosen)) {
      throw std::runtime_error(std::string(variable) + " is " + chosen +
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
    if (std::string candidate = dir + "/" + name; is_executable(candidate)) return candidate;
    start = end + 1;
  }
  throw std::runtime_error(std::string(name) + " not found on PATH (Debian: apt-get install " +
                           package + "), and " + variable + " is not set: " + why);
}

}  // namespace

std::string redis_server_binary() {
  return find_binary("REDLOCK_REDIS_SERVER", "redis-server", "redis-server",
                     "redlock::testing runs real Redis servers");
}

std::string redis_cli_binary() {
  return find_binary("REDLOCK_REDIS_CLI", "redis-cli", "redis-tools",
                     "redlock::testing forms Redis Clusters with redis-cli --cluster create");
}

}  // namespace redlock::testing

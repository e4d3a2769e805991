#include <cstdlib>
#include <stdexcept>
#include <string>

#include <redlock/testing/redis_binary.hpp>

#include "executable_path.hpp"

namespace redlock::testing {
namespace {

// $<variable> when set (it must then name an executable), else the first `name` on $PATH.
std::string find_binary(const char* variable, const char* name, const char* package,
                        const char* why) {
  if (const char* chosen = std::getenv(variable); chosen && *chosen) {
    if (!detail::is_executable(chosen)) {
      throw std::runtime_error(std::string(variable) + " is " + chosen +
                               ", which is not an executable file");
    }
    return chosen;
  }
  if (std::string found = detail::find_on_path(name); !found.empty()) return found;
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

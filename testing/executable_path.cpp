#include "executable_path.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace redlock::testing::detail {

bool is_executable(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  const std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    // An empty entry of $PATH is the working directory, as the shell reads it.
    if (dir.empty()) dir = ".";
    if (std::string candidate = dir + "/" + name; is_executable(candidate)) return candidate;
    start = end + 1;
  }
  return {};
}

}  // namespace redlock::testing::detail

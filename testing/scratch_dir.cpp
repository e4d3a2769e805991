#include "scratch_dir.hpp"

#include <stdlib.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace redlock::testing::detail {

ScratchDir::ScratchDir() {
  // Unix socket paths are limited to 108 bytes: a test that adds --unixsocket to the
  // members' command lines must still fit, so a long $TMPDIR is passed over.
  std::string base = "/tmp";
  if (const char* tmp = std::getenv("TMPDIR"); tmp && *tmp && std::strlen(tmp) < 60) base = tmp;
  std::string pattern = base + "/redlock-fleet-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("mkdtemp " + pattern + ": " + std::strerror(errno));
  }
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace redlock::testing::detail

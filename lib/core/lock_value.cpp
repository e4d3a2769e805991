#include "core/lock_value.hpp"

#include <sys/random.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>

namespace redlock::core {

void fill_random(void* buffer, std::size_t size) {
  auto* bytes = static_cast<unsigned char*>(buffer);
  std::size_t filled = 0;
  while (filled < size) {
    const ssize_t got = getrandom(bytes + filled, size - filled, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      std::perror("redlock: getrandom");
      std::abort();
    }
    filled += static_cast<std::size_t>(got);
  }
}

std::string new_lock_value() {
  unsigned char raw[16];
  fill_random(raw, sizeof raw);
  static constexpr char digits[] = "0123456789abcdef";
  std::string hex(2 * sizeof raw, '\0');
  for (std::size_t i = 0; i < sizeof raw; ++i) {
    hex[2 * i] = digits[raw[i] >> 4];
    hex[2 * i + 1] = digits[raw[i] & 0xF];
  }
  return hex;
}

}  // namespace redlock::core

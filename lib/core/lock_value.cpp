#include "core/lock_value.hpp"

#include <openssl/err.h>
#include <openssl/rand.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>

namespace redlock::core {

void fill_random(void* buffer, std::size_t size, EntropySource source) {
  if (source == nullptr) source = RAND_bytes;
  auto* bytes = static_cast<unsigned char*>(buffer);
  while (size > 0) {
    const int chunk = static_cast<int>(std::min<std::size_t>(size, INT_MAX));
    if (source(bytes, chunk) != 1) {
      // Whatever the source left in the buffer must not become a lock value or a seed.
      char reason[256] = "no reason given";
      if (const unsigned long code = ERR_get_error(); code != 0) {
        ERR_error_string_n(code, reason, sizeof reason);
      }
      std::fprintf(stderr, "redlock: RAND_bytes failed, no lock value can be made: %s\n", reason);
      std::abort();
    }
    bytes += chunk;
    size -= static_cast<std::size_t>(chunk);
  }
}

std::string new_lock_value(EntropySource source) {
  unsigned char raw[16];
  fill_random(raw, sizeof raw, source);
  static constexpr char digits[] = "0123456789abcdef";
  std::string hex(2 * sizeof raw, '\0');
  for (std::size_t i = 0; i < sizeof raw; ++i) {
    hex[2 * i] = digits[raw[i] >> 4];
    hex[2 * i + 1] = digits[raw[i] & 0xF];
  }
  return hex;
}

}  // namespace redlock::core

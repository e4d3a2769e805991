#include "core/lock_value.hpp"

#include <openssl/err.h>
#include <openssl/rand.h>
#include <pthread.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace redlock::core {
namespace {

// OpenSSL 3's RAND_bytes looks its DRBG up on every call: about 6,000 instructions for
// 16 bytes, 6 % of a whole lock cycle. Each thread therefore draws 32 values at a time.
// A forked child inherits the parent's unused bytes and would hand out the parent's next
// values: every fork starts a new generation, which discards them.
std::atomic<unsigned> fork_generation{0};

void count_fork() {
  fork_generation.fetch_add(1, std::memory_order_relaxed);
}

struct ValuePool {
  static constexpr std::size_t size = 512;
  unsigned char bytes[size];
  std::size_t used = size;
  unsigned generation = 0;

  void take(unsigned char* out, std::size_t n) {
    static const bool registered = pthread_atfork(nullptr, nullptr, &count_fork) == 0;
    const unsigned now = fork_generation.load(std::memory_order_relaxed);
    if (!registered || n > size) return fill_random(out, n, RAND_bytes);
    if (used + n > size || generation != now) {
      fill_random(bytes, size, RAND_bytes);
      used = 0;
      generation = now;
    }
    std::memcpy(out, bytes + used, n);
    std::memset(bytes + used, 0, n);  // handed out once only
    used += n;
  }
};

thread_local ValuePool pool;

// Each byte's two lower-case hexadecimal digits, "000102...ff".
constexpr std::array<char, 512> hex_pairs = [] {
  constexpr char digits[] = "0123456789abcdef";
  std::array<char, 512> pairs{};
  for (std::size_t byte = 0; byte < 256; ++byte) {
    pairs[2 * byte] = digits[byte >> 4];
    pairs[2 * byte + 1] = digits[byte & 0xF];
  }
  return pairs;
}();

}  // namespace

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

void write_lock_value(std::string& into, EntropySource source) {
  unsigned char raw[lock_value_size / 2];
  if (source == nullptr) {
    pool.take(raw, sizeof raw);
  } else {
    fill_random(raw, sizeof raw, source);
  }
  into.resize(2 * sizeof raw);
  // Through a pointer and a byte's two digits at a time: a store into a std::string's
  // char may alias its own data pointer, which the loop then read again for each digit.
  char* out = into.data();
  for (std::size_t i = 0; i < sizeof raw; ++i) {
    std::memcpy(out + 2 * i, &hex_pairs[2 * std::size_t{raw[i]}], 2);
  }
}

std::string new_lock_value(EntropySource source) {
  std::string hex;
  write_lock_value(hex, source);
  return hex;
}

}  // namespace redlock::core

#include "scripts/script.hpp"

#include <openssl/evp.h>

#include <cstdio>

namespace redlock::scripts {

std::string digest_hex(int result, const unsigned char* digest, unsigned int length) {
  // A failed computation may still have written a length, and its bytes are then
  // anything: sent with EVALSHA they would meet NOSCRIPT on every call, or name another
  // script. No digest at all sends the connections to the server for it instead.
  constexpr unsigned int sha1_size = 20;
  if (result != 1 || length != sha1_size) return {};
  std::string hex(length * 2, '0');
  for (unsigned int i = 0; i < length; ++i) std::snprintf(&hex[i * 2], 3, "%02x", digest[i]);
  return hex;
}

Script make_script(std::string_view name, std::string_view source) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  const int result = EVP_Digest(source.data(), source.size(), digest, &length, EVP_sha1(), nullptr);
  return Script{name, source, digest_hex(result, digest, length)};
}

}  // namespace redlock::scripts

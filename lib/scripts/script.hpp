#pragma once

#include <string>
#include <string_view>

namespace redlock::scripts {

/// A Lua script sent with EVALSHA (falling back to EVAL on NOSCRIPT).
struct Script {
  std::string_view name;
  std::string_view source;
  /// Lowercase hex SHA-1 of source, computed once at start-up; empty where this process
  /// cannot compute SHA-1 (OpenSSL in FIPS mode, a provider without it). The connections
  /// then take the digest from their servers (SCRIPT LOAD, net/pipeline.hpp).
  std::string sha1;
};

/// A Script of `source` (which must outlive it) with its SHA-1 computed, when it can be.
Script make_script(std::string_view name, std::string_view source);

/// The lowercase hex of the `length` bytes at `digest` that EVP_Digest wrote when it
/// answered `result`, or "" unless it succeeded with the 20 bytes of a SHA-1.
std::string digest_hex(int result, const unsigned char* digest, unsigned int length);

}  // namespace redlock::scripts

#pragma once

#include <string>
#include <string_view>

namespace redlock::scripts {

/// A Lua script sent with EVALSHA (falling back to EVAL on NOSCRIPT).
struct Script {
  std::string_view name;
  std::string_view source;
  std::string sha1;  ///< lowercase hex SHA-1 of source, computed once at start-up
};

/// A Script of `source` (which must outlive it) with its SHA-1 computed.
Script make_script(std::string_view name, std::string_view source);

}  // namespace redlock::scripts

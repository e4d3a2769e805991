#pragma once
// Where the kit finds the programs it runs (redis-server, redis-cli, openssl).

#include <string>

namespace redlock::testing::detail {

/// A regular file this process may execute.
bool is_executable(const std::string& path);

/// The first executable `name` in a directory of $PATH (/usr/local/bin:/usr/bin:/bin when
/// unset), or "" when there is none.
std::string find_on_path(const std::string& name);

}  // namespace redlock::testing::detail

#pragma once
// The ACL rule of docs/security.md for a user that may only lock, as redis-server
// arguments: `--user <rule words>` on the command line equals a `user` line in redis.conf.

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::security_test {

inline const std::string lock_user = "locker";
inline const std::string lock_user_password = "locker-secret";

/// {"--user", "locker", "on", ">locker-secret", "resetkeys", "~lock:*", ...}
inline std::vector<std::string> lock_user_arguments() {
  return {"--user",        "locker",       "on",       ">locker-secret", "resetkeys", "~lock:*",
          "resetchannels", "&lock:*",      "-@all",    "+evalsha",       "+eval",     "+get",
          "+set",          "+del",         "+pexpire", "+pttl",          "+incr",     "+publish",
          "+subscribe",    "+unsubscribe", "+info",    "+hello"};
}

/// lock_user_arguments() without one of its words (e.g. "+info"): a rule an operator got
/// wrong.
inline std::vector<std::string> lock_user_arguments_without(std::string_view word) {
  auto rule = lock_user_arguments();
  rule.erase(std::remove(rule.begin(), rule.end(), word), rule.end());
  return rule;
}

}  // namespace redlock::security_test

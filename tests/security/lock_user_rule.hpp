#pragma once
// The ACL rule of docs/security.md for a user that may only lock, as redis-server
// arguments: `--user <rule words>` on the command line equals a `user` line in redis.conf.

#include <string>
#include <vector>

namespace redlock::security_test {

inline const std::string lock_user = "locker";
inline const std::string lock_user_password = "locker-secret";

/// {"--user", "locker", "on", ">locker-secret", "resetkeys", "~lock:*", ...}
inline std::vector<std::string> lock_user_arguments() {
  return {"--user",  "locker",        "on",       ">locker-secret", "resetkeys",
          "~lock:*", "resetchannels", "&lock:*",  "-@all",          "+evalsha",
          "+eval",   "+get",          "+set",     "+del",           "+pexpire",
          "+pttl",   "+incr",         "+publish", "+subscribe",     "+unsubscribe"};
}

}  // namespace redlock::security_test

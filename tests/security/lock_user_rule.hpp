#pragma once
// The ACL rules of docs/security.md ("An ACL user for locking") for a user that may only
// lock, as redis-server arguments: `--user <rule words>` on the command line equals a
// `user` line in redis.conf (or, for a sentinel, in sentinel.conf). The doc mirrors this
// file word for word: a change to one is a change to the other, so that the suite runs
// the rules operators copy.

#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace redlock::security_test {

inline const std::string lock_user = "locker";
inline const std::string lock_user_password = "locker-secret";

/// The rule's words after `user <name> on ><password>`, for standalone masters.
inline std::vector<std::string> lock_rule() {
  return {"resetkeys", "~lock:*",  "resetchannels", "&lock:*",      "-@all",    "+evalsha",
          "+eval",     "+get",     "+set",          "+del",         "+pexpire", "+pttl",
          "+incr",     "+publish", "+subscribe",    "+unsubscribe", "+info",    "+hello"};
}

/// A Redis Cluster member's masters: the braced names beside the key, sharded pub/sub
/// instead of publish/subscribe/unsubscribe, the slot map and ASKING.
inline std::vector<std::string> cluster_lock_rule() {
  return {
      "resetkeys", "~lock:*",  "~{lock:*",        "resetchannels",  "&lock:*",     "&{lock:*",
      "-@all",     "+evalsha", "+eval",           "+get",           "+set",        "+del",
      "+pexpire",  "+pttl",    "+incr",           "+spublish",      "+ssubscribe", "+sunsubscribe",
      "+info",     "+hello",   "+cluster|shards", "+cluster|slots", "+asking"};
}

/// A Sentinel group's data servers (any of them may be promoted): the base rule and ROLE.
inline std::vector<std::string> sentinel_master_lock_rule() {
  auto rule = lock_rule();
  rule.emplace_back("+role");
  return rule;
}

/// The sentinels' own ACL user (Options::sentinel_username).
inline std::vector<std::string> sentinel_user_rule() {
  return {"resetchannels",    "&+switch-master", "-@all", "+sentinel|get-master-addr-by-name",
          "+sentinel|master", "+subscribe"};
}

/// With member_guard.replicas_to_ack set.
inline std::vector<std::string> replica_ack_additions() {
  return {"+wait"};
}

/// Where the client cannot compute SHA-1 (OpenSSL in FIPS mode): it asks each server a
/// script's digest once.
inline std::vector<std::string> digest_fallback_additions() {
  return {"+script|load"};
}

/// The counting semaphore (docs/kinds.md).
inline std::vector<std::string> semaphore_additions() {
  return {"+type", "+time", "+zadd", "+zrem", "+zcard", "+zrange", "+zscore", "+zremrangebyscore"};
}

inline std::vector<std::string> joined(std::vector<std::string> rule,
                                       const std::vector<std::string>& more) {
  rule.insert(rule.end(), more.begin(), more.end());
  return rule;
}

/// `rule` without one of its words (e.g. "+info"): a rule an operator got wrong.
inline std::vector<std::string> without(std::vector<std::string> rule, std::string_view word) {
  rule.erase(std::remove(rule.begin(), rule.end(), word), rule.end());
  return rule;
}

/// {"--user", name, "on", ">" + password, rule...}
inline std::vector<std::string> user_arguments(const std::string& name, const std::string& password,
                                               const std::vector<std::string>& rule) {
  std::vector<std::string> arguments = {"--user", name, "on", ">" + password};
  arguments.insert(arguments.end(), rule.begin(), rule.end());
  return arguments;
}

/// {"--user", "locker", "on", ">locker-secret", "resetkeys", "~lock:*", ...}
inline std::vector<std::string> lock_user_arguments() {
  return user_arguments(lock_user, lock_user_password, lock_rule());
}

/// lock_user_arguments() without one of its words.
inline std::vector<std::string> lock_user_arguments_without(std::string_view word) {
  return user_arguments(lock_user, lock_user_password, without(lock_rule(), word));
}

}  // namespace redlock::security_test

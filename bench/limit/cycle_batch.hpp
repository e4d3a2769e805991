#pragma once
// The commands of B cycles, one key each: `SET key value NX PX ttl` for the acquires and
// the owner-checked release script (EVALSHA) for the releases. They are encoded once;
// a new batch only writes fresh values over the old ones in place, so the client's work
// per cycle is as small as the protocol allows.

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace redlock_limit {

/// The least a release can be: delete the key only while it still holds our value.
inline constexpr std::string_view release_script =
    "if redis.call('get',KEYS[1]) == ARGV[1] then return redis.call('del',KEYS[1]) "
    "else return 0 end";

class CycleBatch {
 public:
  /// Keys are `key_prefix` followed by the cycle's index in the batch; `release_sha` is
  /// the SHA-1 the nodes gave release_script.
  CycleBatch(const std::string& key_prefix, int size, std::chrono::milliseconds ttl,
             std::string_view release_sha);

  /// A value no cycle has used before for every cycle of the batch: a random prefix
  /// drawn once per process, then a counter.
  void renew_values();

  std::string_view acquires() const noexcept { return acquires_; }
  std::string_view releases() const noexcept { return releases_; }
  int size() const noexcept { return size_; }
  const std::vector<std::string>& keys() const noexcept { return keys_; }

 private:
  static constexpr std::size_t value_length = 32;

  int size_;
  std::vector<std::string> keys_;
  std::string acquires_;
  std::string releases_;
  // Where each cycle's value sits in acquires_ and releases_.
  std::vector<std::size_t> acquire_values_;
  std::vector<std::size_t> release_values_;
  std::uint64_t process_random_;
  std::uint64_t counter_ = 0;
};

/// Appends one command in RESP, as a node expects it on the wire, and returns where the
/// body of arguments[marked] begins in `out`.
std::size_t append_command(std::string& out, std::initializer_list<std::string_view> arguments,
                           std::size_t marked = 0);

}  // namespace redlock_limit

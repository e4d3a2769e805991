#pragma once
// The records chaos workers write and the safety checker reads: one JSON object per line,
// from many processes, all timestamps on CLOCK_MONOTONIC in nanoseconds (every process
// runs on one machine, so they share that clock; std::chrono::steady_clock is it on Linux).
// chaos/checker/README.md has the schema with examples.

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "checker/primitive.hpp"

namespace redlock::chaos {

/// {"type":"hold","key":K,"client":C,"value":V,"start_ns":S,"end_ns":E,"token":T,
///  "primitive":P,"permits":K,"keys":[K...],"term":T}
/// The time a holder may act as the holder of `key`: start_ns is when the acquisition
/// returned success (not when it began: a lock becomes exclusive only once the quorum
/// granted it); end_ns is the earlier of start_ns + validity and the moment the holder
/// began releasing it or gave up (stopped relying on it). Records with the same key and
/// value are segments of one lock (an extension may be logged as a new segment) and never
/// conflict with each other. `token` (fencing token) and `value` are optional.
/// `primitive` says which rule the key obeys (exclusive when absent, so records of the
/// exclusive lock alone need none of the last three fields); a permit carries its K in
/// `permits`; a key set (multi) holds every key of `keys`, and `key` is the first. A
/// leadership (election) is written with "term" instead of "token" (required: the term is
/// the key's fencing token, and judged as one); `token` holds it here.
struct HoldEvent {
  std::string key;
  std::string client;
  std::string value;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
  std::optional<std::uint64_t> token;
  Primitive primitive = Primitive::exclusive;
  int permits = 0;
  std::vector<std::string> keys;
};

/// {"type":"write","key":K,"client":C,"token":T,"accepted":B,"stale":B,"start_ns":S,"end_ns":E}
/// One fenced write of `key`'s resource with fencing token `token`, sent at start_ns and
/// answered at end_ns. accepted: the store applied it. stale: the store refused it
/// because a higher token was already recorded (errc::stale_token); a write neither
/// accepted nor stale failed for another reason (timeout, connection). "at_ns" may stand
/// for both start_ns and end_ns.
struct WriteEvent {
  std::string key;
  std::string client;
  std::uint64_t token = 0;
  bool accepted = false;
  bool stale = false;
  std::int64_t start_ns = 0;
  std::int64_t end_ns = 0;
};

enum class AttemptResult { acquired, conflict, error };

/// {"type":"attempt","key":K,"client":C,"result":"acquired|conflict|error","code":X,"at_ns":T,
///  "primitive":P}
/// The outcome of one lock() call (all its retries; or read_lock(), acquire_permit(), ...
/// as `primitive` says, exclusive when absent): acquired, refused because someone else
/// holds the lock, or an error (`code` says which, e.g. "quorum_unreachable"). Only
/// `result` is required.
struct AttemptEvent {
  std::string key;
  std::string client;
  AttemptResult result = AttemptResult::error;
  std::string code;
  std::int64_t at_ns = 0;
  Primitive primitive = Primitive::exclusive;
};

using Event = std::variant<HoldEvent, WriteEvent, AttemptEvent>;

}  // namespace redlock::chaos

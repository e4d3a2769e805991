#pragma once
// The Lua scripts of the kinds of lock beyond the exclusive lock (client/kinds/kind.hpp
// assembles their keys and arguments). Each runs atomically on one node, reads the node's
// own clock (TIME) to expire holders one by one, and first checks the key's Redis TYPE, so
// a key used as another kind of lock is reported as such instead of failing with
// WRONGTYPE. A key serves one kind:
//   exclusive lock (lock_scripts.hpp)   a string holding the owner's value
//   counting semaphore                  a sorted set: holder value -> expiry (node ms)
//   read-write lock                     a hash: "r:<value>" readers, "w:<value>" the
//                                       writer, "i:<id>" waiting writers' intents ->
//                                       expiry (node ms)
// Such a key always has an expiry and holds nothing but entries of that shape, values
// being lock values (core::new_lock_value); a sorted set or hash of any other content is
// the application's, and the scripts answer it {-1, type} without touching it, as a
// key set does a string without expiry.
// Every script answers an array whose first element says what happened:
//   {1, token}                 granted (token: a writer's fencing counter, else 0)
//   {1, 0, t1, ..., tn}        key set granted with fencing: one token per key
//   {1}                        extend/release/fence: done
//   {0}                        extend/release/fence: the caller holds nothing here
//   {0, ms, holder, why}       acquire refused by `holder`, whose entry ends in `ms`;
//                              `why` in words ("3 live holders", "a writer waits")
//   {0, ms, holder, 'key', K}  multi-key acquire refused: key K is held by `holder`
//   {-1, type[, K]}            the key (K) is of another Redis type (another kind)
// The multi-key lock keeps each key as an exclusive lock's string (lock_scripts.hpp).
// Releases with announce = "1" publish the value on "<key>:released", like the
// exclusive lock's, so waiters are woken without polling; a cluster member's pass "s"
// and SPUBLISH it on the shard channel named in the key's slot: "<key>:released" for a key
// with a hash tag, "{<key>}:released" for one without (net::slot_companion; a key without
// a tag that holds a '}' is refused on clusters before any script runs). A server without
// SPUBLISH (before Redis 7.0) PUBLISHes on that channel instead.

#include "scripts/script.hpp"

namespace redlock::scripts {

/// KEYS: semaphore. ARGV: value, ttl_ms, permits. Expired holders are removed first;
/// granted iff fewer than `permits` live holders remain.
const Script& semaphore_acquire();
/// KEYS: semaphore. ARGV: value, ttl_ms. Sets the holder's expiry to now + ttl if it is
/// still a live holder; an expired holder is removed, never revived.
const Script& semaphore_extend();
/// KEYS: semaphore. ARGV: value, announce ("1"/"s"/"0"). Removes the holder.
const Script& semaphore_release();

/// KEYS: lock, fence counter. ARGV: value, ttl_ms, "r"|"w", and for "w": intent id,
/// intent ttl_ms, fencing ("1"/"0"). See rw_acquire_body for the rule.
const Script& rw_acquire();
/// KEYS: lock. ARGV: value, ttl_ms, "r"|"w". Moves only the caller's live entry.
const Script& rw_extend();
/// KEYS: lock. ARGV: value, announce, "r"|"w", intent id ("" for readers).
const Script& rw_release();
/// KEYS: lock, fence counter. ARGV: value, token. Writers' fencing write-back.
const Script& rw_fence();

/// KEYS: any key. -> {type, role, value, ms left, ...} of its live holders, whatever lock
/// uses it: "o" an exclusive lock's owner, "p" a permit, "w" the writer, "r" a reader,
/// "i" a waiting writer's intent. Reads only; the one script whose reply does not start
/// with a number, and the one that never answers {-1, type}. A sorted set or hash that is
/// not a lock's answers {"zset of other data"} or {"hash of other data"}.
const Script& key_inspect();

/// KEYS: the locks (then, with fencing, their fence counters in the same order). ARGV:
/// value, ttl_ms, fencing ("1"/"0"). SET PX of every key iff none is held here; with
/// fencing each counter is incremented and the grant carries the n tokens. A string
/// without expiry answers {-1, "string", key}.
const Script& multi_acquire();
/// KEYS: the locks. ARGV: value, ttl_ms. PEXPIRE of every key iff all still hold value.
const Script& multi_extend();
/// KEYS: the locks. ARGV: value, announce. Deletes the keys that hold value.
const Script& multi_release();
/// KEYS: the locks, then their fence counters. ARGV: value, one token per key. Raises each
/// counter to its token iff every key still holds value. The key set's write-back.
const Script& multi_fence();

}  // namespace redlock::scripts

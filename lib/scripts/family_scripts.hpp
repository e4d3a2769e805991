#pragma once
// The Lua scripts of the lock family beyond the exclusive lock. Each runs atomically on
// one node, reads the node's own clock (TIME) to expire holders one by one, and first
// checks the key's Redis TYPE, so a key used as another primitive is reported as such
// instead of failing with WRONGTYPE. A key serves one primitive:
//   exclusive lock (lock_scripts.hpp)   a string holding the owner's value
//   counting semaphore                  a sorted set: holder value -> expiry (node ms)
// Every script answers an array whose first element says what happened:
//   {1, ...}                   granted (acquire: the holders now on this node)
//   {0}                        extend/release: the caller holds nothing here
//   {0, ms, holder, holders}   acquire refused: `holders` live holders, the earliest of
//                              them (`holder`) expires in `ms`
//   {-1, type}                 the key is of another Redis type (another primitive)
// Releases with announce = "1" publish the value on "<key>:released", like the
// exclusive lock's, so waiters are woken without polling.

#include "scripts/script.hpp"

namespace redlock::scripts {

/// KEYS: semaphore. ARGV: value, ttl_ms, permits. Expired holders are removed first;
/// granted iff fewer than `permits` live holders remain.
const Script& semaphore_acquire();
/// KEYS: semaphore. ARGV: value, ttl_ms. Sets the holder's expiry to now + ttl if it is
/// still a live holder; an expired holder is removed, never revived.
const Script& semaphore_extend();
/// KEYS: semaphore. ARGV: value, announce ("1"/"0"). Removes the holder.
const Script& semaphore_release();
/// KEYS: semaphore. -> {type, holder, ms left, holder, ms left, ...} of live holders.
const Script& semaphore_inspect();

}  // namespace redlock::scripts

#pragma once
// The Lua scripts of the algorithm. Each runs atomically on one node. Key layout per
// resource R: the lock itself at R (a string holding the owner's value, with a PX TTL),
// the fencing counter at R + ":fence" (never expires), and releases announced on the
// pub/sub channel R + ":released". On a Redis Cluster member the names beside R are put in
// R's slot (net::slot_companion: "{R}:fence" for a key without a hash tag), and releases
// are announced on the shard channel of that name with SPUBLISH.

#include "scripts/script.hpp"

namespace redlock::scripts {

/// KEYS: lock, fence counter. ARGV: value, ttl_ms, fencing ("1"/"0").
/// -> {1, token} when SET NX PX succeeded (token = INCR of the counter, or 0 without
///    fencing); {0, pttl, holder} when the key is held; {-1, type} when the key is of
///    another Redis type (another kind of lock: kind_scripts.hpp).
const Script& acquire();

/// KEYS: lock. ARGV: value. -> 1 if the key held value and was deleted, and the release
/// was published on the key's channel (value as the message) for waiters; else 0.
const Script& release();

/// release() for a cluster member. KEYS: lock. ARGV: value, the release channel in the
/// key's slot. Announces with SPUBLISH, heard only on the shard that owns the slot (with
/// PUBLISH on a server that has no SPUBLISH, before Redis 7.0).
const Script& shard_release();

/// release() without the announcement, for leftovers nobody waits for (a split vote's).
const Script& quiet_release();

/// KEYS: lock. ARGV: value, ttl_ms. -> 1 if the key held value and its TTL was set, else 0.
/// A key that already expired is never re-created.
const Script& extend();

/// KEYS: lock, fence counter. ARGV: value, token. -> 1 if the key still holds value (and
/// the counter is now >= token), else 0.
const Script& fence();

/// KEYS: lock. -> {pttl, value or ""}; {-3, type} for a key of another Redis type.
const Script& inspect();

/// KEYS: highest-token key, data key. ARGV: token, value.
/// -> {1, previous highest} when token >= highest (token recorded, value stored);
///    {0, highest} otherwise (nothing written).
const Script& fenced_write();

/// The suffixes of the derived keys and channel.
inline constexpr const char* fence_suffix = ":fence";
inline constexpr const char* released_suffix = ":released";

}  // namespace redlock::scripts

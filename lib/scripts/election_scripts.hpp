#pragma once
// The Lua scripts of leader election (redlock::Election). The election's key is an
// exclusive lock (lock_scripts.hpp); beside it, at key + leader_suffix (in the key's slot
// on a Redis Cluster member), each member keeps the leader record
// "<lock value> <term> <identity>" (core/election.hpp). The record never expires, like
// the fencing counter: a record whose value no longer holds the key names nobody.

#include "scripts/script.hpp"

namespace redlock::scripts {

/// KEYS: lock, leader record. ARGV: value, record. -> 1 if the key holds value (the
/// record is then written), else 0 (nothing written): only the leader writes its record.
const Script& proclaim();

/// KEYS: lock, leader record. -> {pttl, holder or "", record or ""}; {-3, type} for a key
/// of another Redis type. Reads only.
const Script& leader_read();

inline constexpr const char* leader_suffix = ":leader";

}  // namespace redlock::scripts

#pragma once
// The Lua scripts of leader election (redlock::Election). The election's key is an
// exclusive lock (lock_scripts.hpp); beside it, at key + leader_suffix (in the key's slot
// on a Redis Cluster member), each member keeps the leader record
// "<lock value> <term> <identity>" (core/election.hpp). The record never expires, like
// the fencing counter: a record whose value no longer holds the key names nobody.

#include <string_view>

#include "scripts/script.hpp"

namespace redlock::scripts {

/// KEYS: lock, leader record. ARGV: value, record, the key's release channel (in the key's
/// slot on a cluster member), "1" to announce with SPUBLISH (a cluster member) else "0".
/// -> 1 if the key holds value: the record is then written and the campaign announced on
/// the release channel (campaign_announcement, then the record), for observers; else 0
/// (nothing written, nothing announced): only the leader writes its record.
const Script& proclaim();

/// KEYS: lock, leader record. -> {pttl, holder or "", record or ""}; {-3, type} for a key
/// of another Redis type. Reads only.
const Script& leader_read();

inline constexpr const char* leader_suffix = ":leader";
/// How a campaign's announcement starts: a lock value (hex) never does, so a waiter's
/// notifier tells it apart from a release and wakes only observers with it.
inline constexpr std::string_view campaign_announcement = "elected ";

}  // namespace redlock::scripts

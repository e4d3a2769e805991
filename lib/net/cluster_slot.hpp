#pragma once
// Which of Redis Cluster's 16384 hash slots a key lives in, and how the library names a
// key it keeps next to a user's key (a fencing counter) so that both share that slot.
// Sans-I/O: pure functions of the key's bytes.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace redlock::net {

inline constexpr std::uint16_t cluster_slot_count = 16384;

/// CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0), the checksum Redis Cluster
/// hashes keys with. crc16("123456789") == 0x31C3.
std::uint16_t crc16(std::string_view bytes) noexcept;

/// The part of `key` that decides its slot: the bytes between the first '{' and the
/// first '}' after it when there are any; otherwise (no '{', no '}' after it, or "{}")
/// the whole key. "foo{{bar}}zap" -> "{bar"; "foo{}{bar}" -> "foo{}{bar}".
std::string_view hashed_part(std::string_view key) noexcept;

/// crc16(hashed_part(key)) mod 16384, as CLUSTER KEYSLOT answers.
std::uint16_t key_slot(std::string_view key) noexcept;

/// The name of the key that sits beside `key` with `suffix` on a cluster member, in the
/// slot of `key`: key + suffix when `key` has a hash tag (appending leaves the tag
/// first), else "{" + key + "}" + suffix (the tag is then the whole key). The same
/// name for every holder of `key`, single-key or in a key set. nullopt when no name can
/// be tagged so: a key without a hash tag that holds a '}' (its own bytes cannot be a
/// tag, "a}b" or "x{}"), and the empty key.
std::optional<std::string> slot_companion(std::string_view key, std::string_view suffix);

/// Whether slot_companion(key, ...) names a key (the same for every suffix), without
/// naming it.
bool has_slot_companion(std::string_view key) noexcept;

/// slot_companion() written into `name`, reusing its storage; false, `name` unchanged,
/// where slot_companion() gives nullopt.
bool assign_slot_companion(std::string& name, std::string_view key, std::string_view suffix);

}  // namespace redlock::net

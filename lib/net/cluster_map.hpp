#pragma once
// A Redis Cluster's slot map as data: which shard master owns each of the 16384 slots,
// read from a CLUSTER SHARDS (Redis 7) or CLUSTER SLOTS (Redis 6 and later) reply, and
// the MOVED / ASK redirections that correct it. Sans-I/O: replies in, answers out.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

struct redisReply;

namespace redlock::net {

/// One shard's master as the cluster announces it.
struct ShardMaster {
  /// Without brackets for IPv6 literals. Empty when the cluster does not know it (a node
  /// not yet met by the others): the node that answered is that master.
  std::string host;
  /// The plain-text port; from CLUSTER SHARDS, the TLS port of a server that serves TLS
  /// only (no "port" named).
  std::uint16_t port = 0;
  std::uint16_t tls_port = 0;  ///< 0 when the cluster announces none (CLUSTER SHARDS only).
  std::string id;              ///< The node's 40-character id; empty when not announced.

  friend bool operator==(const ShardMaster&, const ShardMaster&) = default;
};

class SlotMap {
 public:
  /// Reads a CLUSTER SHARDS reply (RESP2: each shard and node a flat field/value array).
  /// A shard's master is its node with role "master"; its address is the node's
  /// "endpoint" unless that is empty or "?" (unknown), then its "ip". Shards without
  /// slots (a master being added) are kept as masters. nullopt with `problem` for a reply
  /// of another shape, a shard with slots and no master, or a slot claimed twice.
  static std::optional<SlotMap> from_shards(const redisReply* reply, std::string& problem);
  /// Reads a CLUSTER SLOTS reply: [first, last, [host, port, id, ...], replicas...] per
  /// range; the first address is the master. Same failures as from_shards.
  static std::optional<SlotMap> from_slots(const redisReply* reply, std::string& problem);

  /// The master that owns `slot` (< cluster_slot_count), or nullptr when no shard serves
  /// it (a cluster still being formed, or slots lost with their shard).
  const ShardMaster* owner(std::uint16_t slot) const noexcept;
  /// The same as an index into masters(), -1 for none: for a router that keeps something
  /// per master.
  std::int32_t owner_index(std::uint16_t slot) const noexcept {
    return slot < owners_.size() ? owners_[slot] : -1;
  }
  /// Every master, slot-less ones included, in the order the reply named them.
  const std::vector<ShardMaster>& masters() const noexcept { return masters_; }
  /// The masters that own at least one slot, in masters()' order: the servers that hold
  /// keys.
  std::vector<ShardMaster> owners() const;
  /// Slots that no master owns.
  std::size_t uncovered() const noexcept;

  /// A MOVED redirection: `slot` is now owned by `to` (added as a master if new).
  void move(std::uint16_t slot, const ShardMaster& to);

 private:
  // A map with no owner yet, for a reply of `command`; nullopt when it is no array.
  static std::optional<SlotMap> empty_for(const redisReply* reply, std::string_view command,
                                          std::string& problem);
  std::size_t index_of(const ShardMaster& master);
  bool claim(std::uint16_t first, std::uint16_t last, std::size_t master, std::string& problem);

  std::vector<ShardMaster> masters_;
  std::vector<std::int32_t> owners_;  // per slot: index into masters_, -1 for none
};

/// A cluster's answer that a key's slot is served elsewhere.
struct Redirect {
  enum class Kind { moved, ask };
  Kind kind = Kind::moved;
  std::uint16_t slot = 0;
  /// Empty when the cluster does not know the owner's endpoint ("MOVED 3999 :6381"): the
  /// node that answered is then to be asked on `port`.
  std::string host;
  std::uint16_t port = 0;
};

/// Reads an error reply's text: "MOVED <slot> <host>:<port>" or "ASK <slot> <host>:<port>"
/// (the host may be an IPv6 literal without brackets: the port follows the last ':').
/// nullopt for any other error, or a redirection that does not parse.
std::optional<Redirect> parse_redirect(std::string_view error_text);

}  // namespace redlock::net

#pragma once
// The primitives of the lock family as the checker sees them, and which of their holds may
// be live on one key at the same instant (docs/kinds.md has the rules the nodes enforce).

#include <optional>
#include <string_view>

namespace redlock::chaos {

enum class Primitive {
  exclusive,  ///< Client::lock, and ReentrantLock around it
  multi,      ///< Client::lock_all: an exclusive hold of each of its keys
  reader,     ///< Client::read_lock
  writer,     ///< Client::write_lock
  permit,     ///< Client::acquire_permit: one of K
  election,   ///< Election::campaign: a leadership, whose term is the key's fencing token
};

/// "exclusive", "multi", "reader", "writer", "permit", "election": the names records carry.
std::string_view name(Primitive primitive);
std::optional<Primitive> primitive_named(std::string_view name);

/// Whether a hold of `a` and one of `b` on the same key may be live together without
/// being a violation of their own: readers share with readers, and permits with permits
/// (how many at once is bounded by K, which the checker counts separately). Everything
/// else excludes everything: an exclusive lock, a key set, a writer and a leadership admit
/// nobody (two leaders of one election at once is the one thing an election forbids), and
/// a key serves one kind of lock, so holds of two kinds never meet on a sound key.
bool may_share(Primitive a, Primitive b);

}  // namespace redlock::chaos

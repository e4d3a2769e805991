#pragma once
// How a node's answer to an acquire becomes a NodeReply. An acquire takes one of two
// forms on a node:
//   - the acquire script (scripts/lock_scripts.hpp): one atomic reply with the holder and
//     its remaining TTL, and the fencing counter; always used with fencing, and on
//     servers older than Redis 7.0;
//   - SET key value NX PX ttl GET, without fencing on Redis 7.0 and later: nil when
//     granted, the holder's value when refused. It costs a node less than half the
//     script's CPU (docs/performance-history.md), but says nothing of the holder's TTL or of a key
//     of another type, which a PTTL or a TYPE sent after it tells.
// These functions only read replies, so each shape is unit-tested without a server.

#include <chrono>
#include <string_view>

#include "member/node.hpp"
#include "net/reply.hpp"

struct redisReply;

namespace redlock::detail {

/// The acquire script's reply: granted (token), held (holder, ttl), wrong_kind, or a
/// protocol error naming `where` for any other shape.
NodeReply interpret_acquire_script(const redisReply* reply, std::string_view where);

/// What a node said to SET key value NX PX ttl GET.
enum class SetAnswer {
  granted,      ///< nil: the key was free and now holds our value
  held,         ///< a string: the key holds that value, ours was not set
  wrong_type,   ///< WRONGTYPE: the key is another kind of lock (TYPE says which)
  unsupported,  ///< a syntax error: a server that rejects NX with GET (before Redis 7.0)
  failed,       ///< a transport or Redis error, or a reply of another shape
};
SetAnswer classify_set_reply(const net::ReplyView& view);

/// The NodeReply of a SET answered `held`, `granted` or `failed` (the holder's TTL still
/// unknown: -1), with `where` naming the node in a protocol error.
NodeReply set_reply(SetAnswer answer, const net::ReplyView& view, std::string_view where);

/// A PTTL's answer as the holder's remaining TTL: -1 (unknown) when the PTTL failed or
/// the key was gone or had no TTL by then. A PTTL runs after the SET that was refused, not
/// atomically with it, so the key may have changed hands in between; waiters use it
/// only as an upper bound on their sleep, which an announced release cuts short.
std::chrono::milliseconds remaining_ttl_of(const net::ReplyView& pttl);

/// The reply to TYPE after a WRONGTYPE: wrong_kind naming the kind. When TYPE itself
/// failed (an ACL user without +type), still wrong_kind, in general terms: the SET's
/// WRONGTYPE already proved the key is no exclusive lock.
NodeReply wrong_kind_from_type(const net::ReplyView& type);

/// Whether the server that answered HELLO (with no arguments: a flat array of names and
/// values in RESP2) accepts SET with both NX and GET, which Redis does from 7.0 on. An
/// error (HELLO is Redis 6.0 and later, an ACL may deny it) or no parsable version
/// answers no: the acquire script works everywhere.
bool accepts_set_nx_get(const net::ReplyView& hello);

}  // namespace redlock::detail

#include "scripts/kind_scripts.hpp"

#include <string>

namespace redlock::scripts {
namespace {

// Shared by every script of these kinds: the key's type check and the node's clock in ms. TIME
// makes a script non-deterministic; Redis 5 and later replicate a script's effects, not
// the script, so that is allowed (and the holder's expiry stays on this node's clock).
// The right Redis type is not enough: an application's own sorted set or hash under the
// name would be purged as expired holders. A key of ours always has an expiry (each
// entry added moves it to the last holder's end), and every entry is a lock value or
// intent id (32 lowercase hex digits, core::new_lock_value), in a hash behind its role's
// "r:", "w:" or "i:", with its expiry in whole node ms. Anything else is answered as
// another kind and left untouched. The check runs on every call, so it is kept to O(1)
// where it can be: a hash's fields are all read anyway and each is checked with byte
// compares (role, length, a numeric expiry); of a sorted set, whose members the calls
// otherwise never read, exactly the members a call may remove or rank below its own are
// checked: the one of lowest score, and all whose score has passed (the purge's) when
// that one's has. Every call checking every member doubled a 16-permit semaphore's cost
// on the nodes; a semaphore in use has a live lowest member, so a call checks one.
constexpr std::string_view prelude = R"lua(
local kind = redis.call('TYPE', KEYS[1])['ok']
local function shaped(entries, roles)
  for n = 1, #entries, 2 do
    local name = entries[n]
    if roles then
      local role = string.byte(name, 1)
      if #name ~= 34 or string.byte(name, 2) ~= 58 or
         (role ~= 114 and role ~= 119 and role ~= 105) or not tonumber(entries[n + 1]) then
        return false
      end
    elseif #name ~= 32 or string.find(name, '[^0-9a-f]') then
      return false
    end
  end
  return true
end
local function ours(entries, roles)
  return redis.call('PTTL', KEYS[1]) >= 0 and shaped(entries, roles)
end
local function wrong_kind(allowed)
  if kind ~= 'none' and kind ~= allowed then return {-1, kind} end
  return nil
end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
)lua";

// A release's announcement of `key` (ARGV[1] its value, ARGV[2] how): "1" PUBLISHes on
// "<key>:released"; "s", a cluster member's, SPUBLISHes on that channel named in the
// key's slot ("{<key>}:released" for a key without a hash tag), or PUBLISHes there on a
// server without sharded pub/sub (before Redis 7.0); "0" announces nothing.
constexpr std::string_view announce = R"lua(
local function announce(key)
  if ARGV[2] == '1' then
    redis.call('PUBLISH', key .. ':released', ARGV[1])
  elseif ARGV[2] == 's' then
    local channel = (string.find(key, '{[^}]+}') and key or '{' .. key .. '}') .. ':released'
    if type(redis.pcall('SPUBLISH', channel, ARGV[1])) == 'table' then
      redis.call('PUBLISH', channel, ARGV[1])
    end
  end
end
)lua";

// The sorted set expires with its last holder, so an abandoned semaphore leaves nothing.
constexpr std::string_view semaphore_common = R"lua(
local bad = wrong_kind('zset')
if bad then return bad end
local now = now_ms()
-- The holder of lowest score: the first whose entry can expire. While it is live no entry
-- has expired and there is nothing to purge.
local first = {}
if kind == 'zset' then
  first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  if not ours(first, false) then return {-1, kind} end
  if tonumber(first[2]) <= now then
    if not shaped(redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES'), false) then
      return {-1, kind}
    end
    redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
    first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  end
end
local function expire_with_last()
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  if last[2] then redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(last[2]) - now)) end
end
)lua";

constexpr std::string_view semaphore_acquire_body = R"lua(
local holders = redis.call('ZCARD', KEYS[1])
if holders >= tonumber(ARGV[3]) then
  return {0, math.floor(tonumber(first[2]) - now), first[1], holders .. ' live holders'}
end
redis.call('ZADD', KEYS[1], string.format('%.0f', now + tonumber(ARGV[2])), ARGV[1])
expire_with_last()
return {1, 0}
)lua";

constexpr std::string_view semaphore_extend_body = R"lua(
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return {0} end
redis.call('ZADD', KEYS[1], 'XX', string.format('%.0f', now + tonumber(ARGV[2])), ARGV[1])
expire_with_last()
return {1}
)lua";

// A release reads no other holder: it removes the caller's own member, whose name no
// application's data can carry (a fresh 128-bit value), and leaves the purge of expired
// holders to the next acquire or extend. That keeps its cost flat however many hold the
// semaphore, where the full check costs a scan of them; and an entry expired here but
// not purged yet is gone either way.
constexpr std::string_view semaphore_release_body = R"lua(
local bad = wrong_kind('zset')
if bad then return bad end
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then
  announce(KEYS[1])
  return {1}
end
return {0}
)lua";

// The read-write lock is a hash of "r:<value>", "w:<value>" and "i:<intent>" fields (a
// reader, the writer, a waiting writer's intent), each holding its expiry in node ms.
constexpr std::string_view rw_common = R"lua(
local bad = wrong_kind('hash')
if bad then return bad end
local fields = {}
if kind == 'hash' then
  if redis.call('PTTL', KEYS[1]) < 0 then return {-1, kind} end
  fields = redis.call('HGETALL', KEYS[1])
end
local now = now_ms()
-- Per role: how many entries are live, and which end first and last (a refusal names
-- one), with no table or substring made per entry.
local live = {r = {n = 0}, w = {n = 0}, i = {n = 0}}
local role_of = {[114] = live.r, [119] = live.w, [105] = live.i}
local longest = 0
-- Every field is checked before any is deleted: the shape test and the holders' reading
-- share one pass.
local expired = {}
for n = 1, #fields, 2 do
  local name = fields[n]
  local expiry = tonumber(fields[n + 1])
  local role = role_of[string.byte(name, 1)]
  if not role or not expiry or #name ~= 34 or string.byte(name, 2) ~= 58 then
    return {-1, kind}
  end
  if expiry <= now then
    expired[#expired + 1] = name
  else
    role.n = role.n + 1
    if role.n == 1 or expiry < role.first_expiry then role.first, role.first_expiry = n, expiry end
    if role.n == 1 or expiry > role.last_expiry then role.last, role.last_expiry = n, expiry end
    if expiry > longest then longest = expiry end
  end
end
for _, name in ipairs(expired) do redis.call('HDEL', KEYS[1], name) end
local function stamp(field, ttl)
  local expiry = now + tonumber(ttl)
  redis.call('HSET', KEYS[1], field, string.format('%.0f', expiry))
  if expiry > longest then longest = expiry end
  redis.call('PEXPIRE', KEYS[1], math.ceil(longest - now))
end
-- The entry of `role` that keeps the caller out longest (pick_longest) or ends first.
local function blocker(role, reason, pick_longest)
  local at, expiry = role.first, role.first_expiry
  if pick_longest then at, expiry = role.last, role.last_expiry end
  return {0, math.floor(expiry - now), string.sub(fields[at], 3), reason}
end
)lua";

// ARGV: value, ttl_ms, mode ("r" or "w"); for writers also intent id, intent ttl_ms,
// fencing ("1"/"0"). A reader needs no live writer and no live writer intent; a writer
// needs no live writer and no live reader, and otherwise leaves (or refreshes) its
// intent, which keeps new readers out of this node until it gets in or the intent ends.
constexpr std::string_view rw_acquire_body = R"lua(
if live.w.n > 0 then return blocker(live.w, 'a writer holds it', false) end
if ARGV[3] == 'r' then
  if live.i.n > 0 then return blocker(live.i, 'a writer waits', false) end
  stamp('r:' .. ARGV[1], ARGV[2])
  return {1, 0}
end
if live.r.n > 0 then
  stamp('i:' .. ARGV[4], ARGV[5])
  return blocker(live.r, live.r.n .. ' readers hold it', true)
end
redis.call('HDEL', KEYS[1], 'i:' .. ARGV[4])
stamp('w:' .. ARGV[1], ARGV[2])
if ARGV[6] == '1' then return {1, redis.call('INCR', KEYS[2])} end
return {1, 0}
)lua";

// ARGV: value, ttl_ms, mode. Only a live entry of the caller is moved.
constexpr std::string_view rw_extend_body = R"lua(
local field = ARGV[3] .. ':' .. ARGV[1]
if not redis.call('HGET', KEYS[1], field) then return {0} end
stamp(field, ARGV[2])
return {1}
)lua";

// ARGV: value, announce, mode, intent id (writers: withdrawn with the entry). Like the
// semaphore's release, it reads no other holder (no rw_common): it deletes only the
// caller's own fields.
constexpr std::string_view rw_release_body = R"lua(
local bad = wrong_kind('hash')
if bad then return bad end
if ARGV[4] and ARGV[4] ~= '' then redis.call('HDEL', KEYS[1], 'i:' .. ARGV[4]) end
if redis.call('HDEL', KEYS[1], ARGV[3] .. ':' .. ARGV[1]) == 1 then
  announce(KEYS[1])
  return {1}
end
return {0}
)lua";

// KEYS: lock, fence counter. ARGV: value, token. The writer's fencing write-back.
constexpr std::string_view rw_fence_body = R"lua(
if not redis.call('HGET', KEYS[1], 'w:' .. ARGV[1]) then return {0} end
if tonumber(redis.call('GET', KEYS[2]) or '0') < tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[2])
end
return {1}
)lua";

// Any key, whatever lock uses it: {type, role, value, ms left, role, value, ms left, ...}.
// It only reads: an expired entry is left out, not deleted, so inspecting changes
// nothing another script could observe. Roles: "o" an exclusive lock's owner (ms left is
// its PTTL, -1 without expiry), "p" a permit, "w" the writer, "r" a reader, "i" a waiting
// writer's intent; writers, readers and intents each ordered by value, permits by expiry.
// A sorted set or hash that is not ours answers "<type> of other data", which no lock kind
// is, rather than passing the application's entries off as holders.
constexpr std::string_view key_inspect_body = R"lua(
local out = {kind}
local function add(role, value, left)
  out[#out + 1] = role
  out[#out + 1] = value
  out[#out + 1] = left
end
if kind == 'string' then
  add('o', redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1]))
  return out
end
if kind ~= 'zset' and kind ~= 'hash' then return out end
local fields
if kind == 'zset' then
  fields = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
else
  fields = redis.call('HGETALL', KEYS[1])
end
if not ours(fields, kind == 'hash') then return {kind .. ' of other data'} end
local now = now_ms()
if kind == 'zset' then
  local live = redis.call('ZRANGEBYSCORE', KEYS[1], string.format('(%.0f', now), '+inf',
                          'WITHSCORES')
  for i = 1, #live, 2 do add('p', live[i], math.floor(tonumber(live[i + 1]) - now)) end
  return out
end
local roles = {w = {}, r = {}, i = {}}
for n = 1, #fields, 2 do
  local expiry = tonumber(fields[n + 1])
  local list = roles[string.sub(fields[n], 1, 1)]
  if list and expiry and expiry > now then
    table.insert(list, {string.sub(fields[n], 3), math.floor(expiry - now)})
  end
end
for _, role in ipairs({'w', 'r', 'i'}) do
  table.sort(roles[role], function(a, b) return a[1] < b[1] end)
  for _, entry in ipairs(roles[role]) do add(role, entry[1], entry[2]) end
end
return out
)lua";

// The multi-key lock: every key is an exclusive lock's string (so single-key locks and
// key sets exclude each other key by key), taken all or none on this node. With fencing
// (ARGV[3] == '1') KEYS holds the n lock keys and then their n fence counters, the same
// counters the single-key lock raises, so tokens of a key grow across both kinds of
// holder; the grant is {1, 0, token of key 1, ..., token of key n}. A string without an
// expiry is no lock's (every lock is SET with PX): the application's, another kind. Its
// value is not judged, since a key may be held by another Redlock client's value.
constexpr std::string_view multi_acquire_source = R"lua(
local fencing = ARGV[3] == '1'
local n = #KEYS
if fencing then n = n / 2 end
for i = 1, n do
  local holder = redis.pcall('GET', KEYS[i])
  if type(holder) == 'table' and holder['err'] then
    return {-1, redis.call('TYPE', KEYS[i])['ok'], KEYS[i]}
  end
  if holder then
    local left = redis.call('PTTL', KEYS[i])
    if left < 0 then return {-1, 'string', KEYS[i]} end
    return {0, left, holder, 'key', KEYS[i]}
  end
end
for i = 1, n do
  redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2])
end
if not fencing then return {1, 0} end
local granted = {1, 0}
for i = 1, n do
  granted[#granted + 1] = redis.call('INCR', KEYS[n + i])
end
return granted
)lua";

// The key set's fencing write-back. KEYS: the n lock keys, then their n fence counters;
// ARGV: value, then one token per key. Raises each counter to its token only while this
// node still holds every key for the caller.
constexpr std::string_view multi_fence_source = R"lua(
local n = #KEYS / 2
for i = 1, n do
  local holder = redis.pcall('GET', KEYS[i])
  if holder ~= ARGV[1] then
    if type(holder) == 'table' and not string.find(holder['err'], 'WRONGTYPE', 1, true) then
      return holder
    end
    return {0}
  end
end
for i = 1, n do
  if tonumber(redis.call('GET', KEYS[n + i]) or '0') < tonumber(ARGV[i + 1]) then
    redis.call('SET', KEYS[n + i], ARGV[i + 1])
  end
end
return {1}
)lua";

// Extends only if this node still holds every key for the caller: a set that lost a key
// here is not held here, and no key is revived.
constexpr std::string_view multi_extend_source = R"lua(
for i = 1, #KEYS do
  local holder = redis.pcall('GET', KEYS[i])
  if holder ~= ARGV[1] then
    if type(holder) == 'table' and not string.find(holder['err'], 'WRONGTYPE', 1, true) then
      return holder
    end
    return {0}
  end
end
for i = 1, #KEYS do
  redis.call('PEXPIRE', KEYS[i], ARGV[2])
end
return {1}
)lua";

// Deletes every key still holding the caller's value; announces each like a lock's release.
constexpr std::string_view multi_release_source = R"lua(
local deleted = 0
for i = 1, #KEYS do
  local holder = redis.pcall('GET', KEYS[i])
  if holder == ARGV[1] then
    redis.call('DEL', KEYS[i])
    announce(KEYS[i])
    deleted = deleted + 1
  elseif type(holder) == 'table' and not string.find(holder['err'], 'WRONGTYPE', 1, true) then
    return holder
  end
end
if deleted > 0 then return {1} end
return {0}
)lua";

// Script::source is a view: each source is assembled once and kept for the process.
const Script& assemble(std::string_view name, std::initializer_list<std::string_view> parts,
                       std::string& storage, Script& script) {
  for (auto part : parts) storage += part;
  script = make_script(name, storage);
  return script;
}

}  // namespace

#define REDLOCK_KIND_SCRIPT(function, ...)                                          \
  const Script& function() {                                                        \
    static std::string source;                                                      \
    static Script script;                                                           \
    static const Script& made = assemble(#function, {__VA_ARGS__}, source, script); \
    return made;                                                                    \
  }

REDLOCK_KIND_SCRIPT(semaphore_acquire, prelude, semaphore_common, semaphore_acquire_body)
REDLOCK_KIND_SCRIPT(semaphore_extend, prelude, semaphore_common, semaphore_extend_body)
REDLOCK_KIND_SCRIPT(semaphore_release, prelude, announce, semaphore_release_body)

REDLOCK_KIND_SCRIPT(rw_acquire, prelude, rw_common, rw_acquire_body)
REDLOCK_KIND_SCRIPT(rw_extend, prelude, rw_common, rw_extend_body)
REDLOCK_KIND_SCRIPT(rw_release, prelude, announce, rw_release_body)
REDLOCK_KIND_SCRIPT(rw_fence, prelude, rw_common, rw_fence_body)

REDLOCK_KIND_SCRIPT(key_inspect, prelude, key_inspect_body)

REDLOCK_KIND_SCRIPT(multi_acquire, multi_acquire_source)
REDLOCK_KIND_SCRIPT(multi_extend, multi_extend_source)
REDLOCK_KIND_SCRIPT(multi_release, announce, multi_release_source)
REDLOCK_KIND_SCRIPT(multi_fence, multi_fence_source)

#undef REDLOCK_KIND_SCRIPT

}  // namespace redlock::scripts

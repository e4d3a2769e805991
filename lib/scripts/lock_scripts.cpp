#include "scripts/lock_scripts.hpp"

namespace redlock::scripts {
namespace {

Script make(std::string_view name, std::string_view source) {
  return make_script(name, source);
}

// GET runs under pcall: on a key of another type (a semaphore, kind_scripts.hpp) it
// fails with WRONGTYPE, which the owner checks read as "not ours" and the acquire reports
// with the key's TYPE (called only then, so a lock-only ACL user needs no +type). Any
// other failure of it (an ACL user without +get) is the owner checks' answer, an error
// naming the refusal: read as "not ours", a release would report success and leave the
// key held until its TTL ends.
// GET before SET NX would be racy outside a script; inside, the whole body is atomic.
constexpr std::string_view acquire_source = R"lua(
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  if ARGV[3] == '1' then
    return {1, redis.call('INCR', KEYS[2])}
  end
  return {1, 0}
end
local holder = redis.pcall('GET', KEYS[1])
if type(holder) == 'table' and holder['err'] then
  return {-1, redis.call('TYPE', KEYS[1])['ok']}
end
return {0, redis.call('PTTL', KEYS[1]), holder or ''}
)lua";

// Two release scripts rather than one with an "announce" flag: each argument costs the
// node a Lua table slot per call, and the flag cost about as much as the branch it chose
// (bench/script-cost --counted: 23,351 instructions per announced release with the flag,
// 21,833 without). Each takes the value alone.
constexpr std::string_view release_source = R"lua(
local holder = redis.pcall('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('DEL', KEYS[1])
  redis.call('PUBLISH', KEYS[1] .. ':released', ARGV[1])
  return 1
end
if type(holder) == 'table' and not string.find(holder['err'], 'WRONGTYPE', 1, true) then
  return holder
end
return 0
)lua";

// A cluster member's: a PUBLISH there is carried over the cluster bus to every node, a
// SPUBLISH only to the shard that owns the channel's slot, where its waiters subscribe. The
// channel (ARGV[2]) is named in the key's slot, so the script may publish on it. A server
// without SPUBLISH (before Redis 7.0) PUBLISHes on it instead, and the key is released
// either way.
constexpr std::string_view shard_release_source = R"lua(
local holder = redis.pcall('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('DEL', KEYS[1])
  if type(redis.pcall('SPUBLISH', ARGV[2], ARGV[1])) == 'table' then
    redis.call('PUBLISH', ARGV[2], ARGV[1])
  end
  return 1
end
if type(holder) == 'table' and not string.find(holder['err'], 'WRONGTYPE', 1, true) then
  return holder
end
return 0
)lua";

constexpr std::string_view quiet_release_source = R"lua(
local holder = redis.pcall('GET', KEYS[1])
if holder == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
if type(holder) == 'table' and not string.find(holder['err'], 'WRONGTYPE', 1, true) then
  return holder
end
return 0
)lua";

constexpr std::string_view extend_source = R"lua(
local holder = redis.pcall('GET', KEYS[1])
if holder == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
if type(holder) == 'table' and not string.find(holder['err'], 'WRONGTYPE', 1, true) then
  return holder
end
return 0
)lua";

// Lua numbers are doubles: tokens stay exact up to 2^53, far beyond any real counter.
constexpr std::string_view fence_source = R"lua(
local holder = redis.pcall('GET', KEYS[1])
if holder ~= ARGV[1] then
  if type(holder) == 'table' and not string.find(holder['err'], 'WRONGTYPE', 1, true) then
    return holder
  end
  return 0
end
local current = tonumber(redis.call('GET', KEYS[2]) or '0')
if current < tonumber(ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[2])
end
return 1
)lua";

// A key of another kind answers {-3, type}: PTTL never returns -3.
constexpr std::string_view inspect_source = R"lua(
local holder = redis.pcall('GET', KEYS[1])
if type(holder) == 'table' and holder['err'] then
  return {-3, redis.call('TYPE', KEYS[1])['ok']}
end
return {redis.call('PTTL', KEYS[1]), holder or ''}
)lua";

constexpr std::string_view fenced_write_source = R"lua(
local highest = tonumber(redis.call('GET', KEYS[1]) or '0')
local token = tonumber(ARGV[1])
if token < highest then
  return {0, highest}
end
redis.call('SET', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
return {1, highest}
)lua";

}  // namespace

const Script& acquire() {
  static const Script script = make("acquire", acquire_source);
  return script;
}
const Script& release() {
  static const Script script = make("release", release_source);
  return script;
}
const Script& shard_release() {
  static const Script script = make("release", shard_release_source);
  return script;
}
const Script& quiet_release() {
  static const Script script = make("quiet release", quiet_release_source);
  return script;
}
const Script& extend() {
  static const Script script = make("extend", extend_source);
  return script;
}
const Script& fence() {
  static const Script script = make("fence", fence_source);
  return script;
}
const Script& inspect() {
  static const Script script = make("inspect", inspect_source);
  return script;
}
const Script& fenced_write() {
  static const Script script = make("fenced_write", fenced_write_source);
  return script;
}

}  // namespace redlock::scripts

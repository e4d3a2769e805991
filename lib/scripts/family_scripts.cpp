#include "scripts/family_scripts.hpp"

#include <string>

namespace redlock::scripts {
namespace {

// Shared by every family script: the key's type check and the node's clock in ms. TIME
// makes a script non-deterministic; Redis 5 and later replicate a script's effects, not
// the script, so that is allowed (and the holder's expiry stays on this node's clock).
constexpr std::string_view prelude = R"lua(
local kind = redis.call('TYPE', KEYS[1])['ok']
local function wrong_kind(allowed)
  if kind ~= 'none' and kind ~= allowed then return {-1, kind} end
  return nil
end
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
)lua";

// The sorted set expires with its last holder, so an abandoned semaphore leaves nothing.
constexpr std::string_view semaphore_common = R"lua(
local bad = wrong_kind('zset')
if bad then return bad end
local now = now_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local function expire_with_last()
  local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  if last[2] then redis.call('PEXPIRE', KEYS[1], math.ceil(tonumber(last[2]) - now)) end
end
)lua";

constexpr std::string_view semaphore_acquire_body = R"lua(
local holders = redis.call('ZCARD', KEYS[1])
if holders >= tonumber(ARGV[3]) then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, math.floor(tonumber(first[2]) - now), first[1], holders}
end
redis.call('ZADD', KEYS[1], string.format('%.0f', now + tonumber(ARGV[2])), ARGV[1])
expire_with_last()
return {1, holders + 1}
)lua";

constexpr std::string_view semaphore_extend_body = R"lua(
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return {0} end
redis.call('ZADD', KEYS[1], 'XX', string.format('%.0f', now + tonumber(ARGV[2])), ARGV[1])
expire_with_last()
return {1}
)lua";

constexpr std::string_view semaphore_release_body = R"lua(
if redis.call('ZREM', KEYS[1], ARGV[1]) == 1 then
  if ARGV[2] == '1' then redis.call('PUBLISH', KEYS[1] .. ':released', ARGV[1]) end
  return {1}
end
return {0}
)lua";

constexpr std::string_view semaphore_inspect_body = R"lua(
local out = {kind}
local all = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
for i = 1, #all, 2 do
  out[#out + 1] = all[i]
  out[#out + 1] = math.floor(tonumber(all[i + 1]) - now)
end
return out
)lua";

// Script::source is a view: each source is assembled once and kept for the process.
const Script& assemble(std::string_view name, std::initializer_list<std::string_view> parts,
                       std::string& storage, Script& script) {
  for (auto part : parts) storage += part;
  script = make_script(name, storage);
  return script;
}

}  // namespace

#define REDLOCK_FAMILY_SCRIPT(function, ...)                                        \
  const Script& function() {                                                        \
    static std::string source;                                                      \
    static Script script;                                                           \
    static const Script& made = assemble(#function, {__VA_ARGS__}, source, script); \
    return made;                                                                    \
  }

REDLOCK_FAMILY_SCRIPT(semaphore_acquire, prelude, semaphore_common, semaphore_acquire_body)
REDLOCK_FAMILY_SCRIPT(semaphore_extend, prelude, semaphore_common, semaphore_extend_body)
REDLOCK_FAMILY_SCRIPT(semaphore_release, prelude, semaphore_common, semaphore_release_body)
REDLOCK_FAMILY_SCRIPT(semaphore_inspect, prelude, semaphore_common, semaphore_inspect_body)

#undef REDLOCK_FAMILY_SCRIPT

}  // namespace redlock::scripts

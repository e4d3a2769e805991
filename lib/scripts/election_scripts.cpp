#include "scripts/election_scripts.hpp"

namespace redlock::scripts {
namespace {

// GET under pcall, as the other owner checks: a key of another type is "not ours", any
// other refusal of the GET the script's error (lock_scripts.cpp). The
// announcement goes where releases go (lock_scripts.cpp: PUBLISH, or on a cluster member
// SPUBLISH with PUBLISH where a server has none), so observers hear it on the same
// subscription.
constexpr std::string_view proclaim_source = R"lua(
local holder = redis.pcall('GET', KEYS[1])
if holder ~= ARGV[1] then
  if type(holder) == 'table' and not string.find(holder['err'], 'WRONGTYPE', 1, true) then
    return holder
  end
  return 0
end
redis.call('SET', KEYS[2], ARGV[2])
local message = 'elected ' .. ARGV[2]
if ARGV[4] == 's' then
  if type(redis.pcall('SPUBLISH', ARGV[3], message)) == 'table' then
    redis.call('PUBLISH', ARGV[3], message)
  end
else
  redis.call('PUBLISH', ARGV[3], message)
end
return 1
)lua";

// The key and the record in one atomic read, so a record is never paired with a holder
// it did not sit beside. A key of another kind answers {-3, type} (PTTL never returns -3).
constexpr std::string_view leader_read_source = R"lua(
local holder = redis.pcall('GET', KEYS[1])
if type(holder) == 'table' and holder['err'] then
  return {-3, redis.call('TYPE', KEYS[1])['ok']}
end
local record = redis.pcall('GET', KEYS[2])
if type(record) ~= 'string' then
  record = ''
end
return {redis.call('PTTL', KEYS[1]), holder or '', record}
)lua";

}  // namespace

const Script& proclaim() {
  static const Script script = make_script("proclaim", proclaim_source);
  return script;
}

const Script& leader_read() {
  static const Script script = make_script("leader_read", leader_read_source);
  return script;
}

}  // namespace redlock::scripts

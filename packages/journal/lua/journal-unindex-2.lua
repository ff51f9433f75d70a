--[[
  Removes an entry id from a search-key index when the entry's payload is still missing (the
  repair of an index entry without its entry): re-checked here, so an insert landing meanwhile
  is never undone.

  KEYS[1] journal:index:{scope}:{journal}:{searchKey}:{value}   zset  entry id, score reference time
  KEYS[2] journal:payload:{scope}:{journal}                      hash  entry id -> encoded entry

  ARGV[1] entry id

  Replies:
    {"ok", removed}   1 when the id was removed, 0 when its payload is back or the id is gone
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local badKey, badType, wantType = wrongType({ { KEYS[1], 'zset' }, { KEYS[2], 'hash' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return { 'ok', 0 } end
return { 'ok', redis.call('ZREM', KEYS[1], ARGV[1]) }

--[[
  Sets a journal's entry count and bytes to what its payload hash holds (the repair of the
  journal check), reading the payloads in the same atomic step.

  KEYS[1] journal:payload:{scope}:{journal}   hash  entry id -> encoded entry
  KEYS[2] journal:count:{scope}               hash  journal -> entries
  KEYS[3] journal:bytes:{scope}               hash  journal -> bytes

  ARGV[1] journal name

  Replies:
    {"ok", entries, bytes}
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local badKey, badType, wantType = wrongType({ { KEYS[1], 'hash' }, { KEYS[2], 'hash' }, { KEYS[3], 'hash' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local ids = redis.call('HKEYS', KEYS[1])
local bytes = 0
for _, id in ipairs(ids) do bytes = bytes + redis.call('HSTRLEN', KEYS[1], id) end
if #ids == 0 then
  redis.call('HDEL', KEYS[2], ARGV[1])
  redis.call('HDEL', KEYS[3], ARGV[1])
else
  redis.call('HSET', KEYS[2], ARGV[1], #ids)
  redis.call('HSET', KEYS[3], ARGV[1], bytes)
end
return { 'ok', #ids, bytes }

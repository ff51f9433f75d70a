--[[
  Sets a counter total to the sum of its stored buckets (the repair of the counter check). It
  reads the buckets itself, in the same atomic step, so an insert landing meanwhile is never undone.

  KEYS[1] counter:{scope}:{journal}:{counter}                 hash  value -> total
  KEYS[2] counter:bucket:{scope}:{journal}:{counter}:{value}  hash  bucket start -> amount

  ARGV[1] value (the total's field)

  Replies:
    {"ok", total}   the total now ("0" and the field removed when no bucket is left)
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local badKey, badType, wantType = wrongType({ { KEYS[1], 'hash' }, { KEYS[2], 'hash' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local buckets = redis.call('HGETALL', KEYS[2])
if #buckets == 0 then
  redis.call('HDEL', KEYS[1], ARGV[1])
  return { 'ok', '0' }
end
local total = 0
for i = 2, #buckets, 2 do total = total + tonumber(buckets[i]) end
local text = string.format('%.17g', total)
redis.call('HSET', KEYS[1], ARGV[1], text)
return { 'ok', text }

--[[
  Gives a dedupe lease back without marking the event done (processing failed), so another
  claimer may take it at once. Deletes only the caller's own lease: never "done", never a
  lease of another token.

  KEYS[1] ce:dedupe:{hash}   string

  ARGV[1] token of the caller

  Replies:
    {"ok", 1}                         the caller's lease was deleted
    {"ok", 0}                         the key is absent, done, or held by another token
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local key, token = KEYS[1], ARGV[1]

local badKey, badType, wantType = wrongType({ { key, 'string' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

if redis.call('GET', key) ~= 'processing:' .. token then return { 'ok', 0 } end
redis.call('DEL', key)
return { 'ok', 1 }

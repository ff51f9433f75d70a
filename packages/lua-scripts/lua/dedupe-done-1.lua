--[[
  Marks a claimed CloudEvent as processed, but only while the caller still holds the
  lease: a caller whose lease expired may have been overtaken by another claimer. The reply to
  the event is kept with the mark, so a duplicate gets the same answer again.

  KEYS[1] ce:dedupe:{hash}   string

  ARGV[1] token of the caller
  ARGV[2] done TTL in ms (positive integer; validated by the caller)
  ARGV[3] the reply to keep (text); empty keeps none

  Replies:
    {"ok"}                            now "done" (or "done:{reply}") with the done TTL
    {"lost", stored}                  the caller does not hold the lease; stored is the current
                                      value (false when the key is gone); nothing written
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local key, token, ttlMs, reply = KEYS[1], ARGV[1], ARGV[2], ARGV[3]

local badKey, badType, wantType = wrongType({ { key, 'string' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local stored = redis.call('GET', key)
if stored ~= 'processing:' .. token then return { 'lost', stored } end
if reply == nil or reply == '' then
  redis.call('SET', key, 'done', 'PX', ttlMs)
else
  redis.call('SET', key, 'done:' .. reply, 'PX', ttlMs)
end
return { 'ok' }

--[[
  Marks a claimed CloudEvent as processed (seed R-4), but only while the caller still holds the
  lease: a caller whose lease expired may have been overtaken by another claimer.

  KEYS[1] ce:dedupe:{hash}   string

  ARGV[1] token of the caller
  ARGV[2] done TTL in ms (positive integer; validated by the caller)

  Replies:
    {"ok"}                            now "done" with the done TTL
    {"lost", stored}                  the caller does not hold the lease; stored is the current
                                      value (false when the key is gone); nothing written
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local key, token, ttlMs = KEYS[1], ARGV[1], ARGV[2]

local badKey, badType, wantType = wrongType({ { key, 'string' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local stored = redis.call('GET', key)
if stored ~= 'processing:' .. token then return { 'lost', stored } end
redis.call('SET', key, 'done', 'PX', ttlMs)
return { 'ok' }

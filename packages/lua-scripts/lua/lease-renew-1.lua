--[[
  Extends a lease, only while the caller still holds it (a long-running holder such as the
  publisher renews well before the TTL runs out). SET IFEQ would do this in one command but is
  newer than Redis 7.0, hence the script.

  KEYS[1] lease key          string

  ARGV[1] holder id
  ARGV[2] new TTL in ms, counted from now (positive integer; validated by the caller)

  Replies:
    {"renewed"}
    {"lost", stored}                  the caller does not hold it (stored: current holder or false)
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local key, holder, ttlMs = KEYS[1], ARGV[1], ARGV[2]

local badKey, badType, wantType = wrongType({ { key, 'string' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local stored = redis.call('GET', key)
if stored ~= holder then return { 'lost', stored } end
redis.call('PEXPIRE', key, ttlMs)
return { 'renewed' }

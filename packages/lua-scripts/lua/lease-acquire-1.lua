--[[
  Takes a lease (lock:poststart:{configId}, lock:publisher, ...): SET NX PX, as Python's
  post-start lock did, plus a type guard so a corrupted key is reported, not
  mistaken for a held lease. Not reentrant: the holder itself gets "held" too.

  KEYS[1] lease key          string  holder id, with TTL

  ARGV[1] holder id
  ARGV[2] TTL in ms (positive integer; validated by the caller)

  Replies:
    {"acquired"}
    {"held", holder, remainingMs}     someone holds it (remainingMs is PTTL, floored at 0)
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local key, holder, ttlMs = KEYS[1], ARGV[1], ARGV[2]

local badKey, badType, wantType = wrongType({ { key, 'string' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

if redis.call('SET', key, holder, 'NX', 'PX', ttlMs) then return { 'acquired' } end
local remaining = redis.call('PTTL', key)
if remaining < 0 then remaining = 0 end
return { 'held', redis.call('GET', key), remaining }

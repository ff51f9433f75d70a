--[[
  Releases a lease: compare and delete, so only the holder can release it. A holder whose lease
  expired and was taken over must not delete the new holder's lease.

  KEYS[1] lease key          string

  ARGV[1] holder id

  Replies:
    {"released"}
    {"notheld", stored}               nothing deleted (stored: current holder or false)
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local key, holder = KEYS[1], ARGV[1]

local badKey, badType, wantType = wrongType({ { key, 'string' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local stored = redis.call('GET', key)
if stored ~= holder then return { 'notheld', stored } end
redis.call('DEL', key)
return { 'released' }

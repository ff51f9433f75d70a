--[[
  Adds ids to a reference list and registers its scope, in one atomic step so
  the registry never misses a scope that holds a list. A newly registered scope is announced on
  the nudge channel so scope watchers find it at once (a wake-up only; the set is the truth).

  KEYS[1] ref:{kind}:{scope}    set  ids
  KEYS[2] scopes                set  every scope with data

  ARGV[1] scope
  ARGV[2] nudge channel ({prefix}:nudge:changes)
  ARGV[3..n] ids (at least one)

  Replies:
    {"ok", addedCount}
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local listKey, scopesKey = KEYS[1], KEYS[2]
local scope, channel = ARGV[1], ARGV[2]

local badKey, badType, wantType = wrongType({ { listKey, 'set' }, { scopesKey, 'set' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

-- SADD in chunks: unpack() of thousands of values would overflow the Lua stack.
local added = 0
local chunk = 1000
for first = 3, #ARGV, chunk do
  added = added + redis.call('SADD', listKey, unpack(ARGV, first, math.min(first + chunk - 1, #ARGV)))
end
if redis.call('SADD', scopesKey, scope) == 1 then redis.call('PUBLISH', channel, scope) end
return { 'ok', added }

--[[
  Index rebuild: registers a scope that holds data (a reference list or an acceptance limit) but
  is missing from the registry, and nudges scope watchers, as add-references-2.lua does.

  KEYS[1] scopes                set  every scope with data

  ARGV[1] scope
  ARGV[2] nudge channel ({prefix}:nudge:changes)

  Replies:
    {"ok", added}                  added = 1 when the scope was missing
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local badKey, badType, wantType = wrongType({ { KEYS[1], 'set' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end
local added = redis.call('SADD', KEYS[1], ARGV[1])
if added == 1 then redis.call('PUBLISH', ARGV[2], ARGV[1]) end
return { 'ok', added }

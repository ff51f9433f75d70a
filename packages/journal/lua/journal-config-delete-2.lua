--[[
  Removes one journal's configuration and nudges every process that holds it in memory. Its
  entries and counters stay as they are (nothing records into them any more, no sweep expires them).

  KEYS[1] journal:config:{scope}   hash  journal name -> configuration (JSON)
  KEYS[2] journal:scopes           set   scopes with a journal configured

  ARGV[1] scope
  ARGV[2] journal name
  ARGV[3] nudge channel ({prefix}:nudge:journal)

  Replies:
    {"ok"}
    {"notfound"}
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local badKey, badType, wantType = wrongType({ { KEYS[1], 'hash' }, { KEYS[2], 'set' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

if redis.call('HDEL', KEYS[1], ARGV[2]) == 0 then return { 'notfound' } end
if redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SREM', KEYS[2], ARGV[1]) end
redis.call('PUBLISH', ARGV[3], ARGV[1])
return { 'ok' }

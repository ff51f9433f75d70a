--[[
  Stores one journal's configuration (validated by the caller), registers its scope and nudges
  every process that holds the configuration in memory.

  KEYS[1] journal:config:{scope}   hash  journal name -> configuration (JSON)
  KEYS[2] journal:scopes           set   scopes with a journal configured

  ARGV[1] scope
  ARGV[2] journal name
  ARGV[3] configuration (JSON text)
  ARGV[4] nudge channel ({prefix}:nudge:journal)

  Replies:
    {"ok", created}   1 when the journal was new, 0 when its configuration was replaced
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local badKey, badType, wantType = wrongType({ { KEYS[1], 'hash' }, { KEYS[2], 'set' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local created = redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('PUBLISH', ARGV[4], ARGV[1])
return { 'ok', created }

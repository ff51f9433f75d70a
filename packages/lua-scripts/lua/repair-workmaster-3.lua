--[[
  Index rebuild: re-establishes the index entries of one work master, if the document is still
  the one the caller read (the set key follows from the stored scope). Writes only index entries.

  KEYS[1] workmaster:{id}              hash  read only
  KEYS[2] workmaster:list:{scope}      set   gains the id
  KEYS[3] scopes                       set   gains the scope

  ARGV[1] id
  ARGV[2] version (v) the caller read
  ARGV[3] scope the caller read (KEYS[2] was built from it)
  ARGV[4] nudge channel ({prefix}:nudge:changes), told about a newly registered scope

  Replies:
    {"ok", fixes}                  fixes = entries added (0 = all were right)
    {"gone"}                       the document no longer exists; nothing written
    {"retry", storedVersion}       the document changed since the caller read it; nothing written
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local docKey, listKey, scopesKey = KEYS[1], KEYS[2], KEYS[3]
local id, version, scope, channel = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local badKey, badType, wantType = wrongType({ { docKey, 'hash' }, { listKey, 'set' }, { scopesKey, 'set' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local stored = redis.call('HMGET', docKey, 'v', 'scope')
if not stored[1] then return { 'gone' } end
if stored[1] ~= version or stored[2] ~= scope then return { 'retry', stored[1] } end

local fixes = redis.call('SADD', listKey, id)
if redis.call('SADD', scopesKey, scope) == 1 then
  fixes = fixes + 1
  redis.call('PUBLISH', channel, scope)
end
return { 'ok', fixes }

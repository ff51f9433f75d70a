--[[
  Index repair of one maintenance ticket (index rebuild): re-establishes its list and by-status
  entries, if the ticket is still the one the caller read. Writes only index entries.

  KEYS[1] ticket:{id}                        hash  read only
  KEYS[2] ticket:list:{scope}                zset  the id, with the score ARGV[4]
  KEYS[3] ticket:bystatus:{scope}:{status}   set   gains the id

  ARGV[1] id
  ARGV[2] version (v) the caller read
  ARGV[3] scope the caller read
  ARGV[4] score: the severity the caller read

  Replies:
    {"ok", fixes}                  fixes = entries added or corrected
    {"gone"}                       the ticket no longer exists; nothing written
    {"retry", storedVersion}       the ticket changed since the caller read it; nothing written
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local badKey, badType, wantType = wrongType({ { KEYS[1], 'hash' }, { KEYS[2], 'zset' }, { KEYS[3], 'set' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local stored = redis.call('HMGET', KEYS[1], 'v', 'scope')
if not stored[1] then return { 'gone' } end
if stored[1] ~= ARGV[2] or stored[2] ~= ARGV[3] then return { 'retry', stored[1] } end

local fixes = redis.call('ZADD', KEYS[2], 'CH', ARGV[4], ARGV[1])
fixes = fixes + redis.call('SADD', KEYS[3], ARGV[1])
return { 'ok', fixes }

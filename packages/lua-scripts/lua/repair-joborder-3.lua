--[[
  Index rebuild: re-establishes the index entries of one job order, if the document is still the
  one the caller read (the list key follows from the stored scope).
  Writes only index entries; the document is never changed.

  KEYS[1] joborder:{id}              hash  read only
  KEYS[2] joborder:list:{scope}      zset  holds the id with score priority while the document is
                                           persistent; loses it once the job order is retired (TTL)
  KEYS[3] scopes                     set   gains the scope

  ARGV[1] id
  ARGV[2] version (v) the caller read
  ARGV[3] scope the caller read (KEYS[2] was built from it)
  ARGV[4] priority field the caller read ("" = none); re-checked
  ARGV[5] list score the caller computed from it ("" = none or not a finite number: keep an
          existing score, else score 0)
  ARGV[6] nudge channel ({prefix}:nudge:changes), told about a newly registered scope

  Replies:
    {"ok", fixes}                  fixes = entries added, moved or removed (0 = all were right)
    {"gone"}                       the document no longer exists; nothing written
    {"retry", storedVersion}       the document changed since the caller read it; nothing written
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local docKey, listKey, scopesKey = KEYS[1], KEYS[2], KEYS[3]
local id, version, scope, priority, score, channel = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]

local badKey, badType, wantType = wrongType({ { docKey, 'hash' }, { listKey, 'zset' }, { scopesKey, 'set' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local stored = redis.call('HMGET', docKey, 'v', 'scope', 'priority')
if not stored[1] then return { 'gone' } end
if stored[1] ~= version or stored[2] ~= scope or (stored[3] or '') ~= priority then return { 'retry', stored[1] } end

local fixes = 0
if redis.call('PTTL', docKey) == -1 then
  local listed = redis.call('ZSCORE', listKey, id)
  if score == '' then
    fixes = fixes + redis.call('ZADD', listKey, 'NX', 0, id)
  elseif not listed or tonumber(listed) ~= tonumber(score) then
    -- The score goes on as the caller's text: a Lua number would print with 14 digits only.
    redis.call('ZADD', listKey, score, id)
    fixes = fixes + 1
  end
else
  fixes = fixes + redis.call('ZREM', listKey, id)
end
if redis.call('SADD', scopesKey, scope) == 1 then
  fixes = fixes + 1
  redis.call('PUBLISH', channel, scope)
end
return { 'ok', fixes }

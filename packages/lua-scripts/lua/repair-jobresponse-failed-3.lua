--[[
  Index rebuild of the failed set: sets one job response's membership in its scope's failed set,
  if the document is still what the caller read (version, scope). An Aborted response belongs
  while its job order is listed in the scope (live); once the order is retired (Clear, Cancel) or
  deleted the job is no longer an incident and the response leaves the set. Writes only the
  index entry; judges the order's listing itself, so a put in between is never undone.

  KEYS[1] jobresponse:{id}              hash   read only
  KEYS[2] jobresponse:failed:{scope}    zset   holds the id, scored by the response's end time
  KEYS[3] joborder:list:{scope}         zset   read only: whether the response's order is live

  ARGV[1] id
  ARGV[2] version (v) the caller read
  ARGV[3] scope the caller read
  ARGV[4] score the caller computed from its read ("" = unknown: keep an existing score, else the
          stored `end`, else `start`, else 0)

  Replies:
    {"ok", fixes}                  fixes = entries added, changed or removed (0 = it was right)
    {"gone"}                       the document no longer exists; nothing written
    {"retry", storedValue}         the document changed since the caller read it
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local docKey, failedKey, orderListKey = KEYS[1], KEYS[2], KEYS[3]
local id, version, scope, score = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local badKey, badType, wantType = wrongType({ { docKey, 'hash' }, { failedKey, 'zset' }, { orderListKey, 'zset' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local f = redis.call('HMGET', docKey, 'v', 'scope', 'state', 'end', 'start', 'order')
if not f[1] then return { 'gone' } end
if f[1] ~= version or f[2] ~= scope then return { 'retry', f[1] } end

local listed = redis.call('ZSCORE', failedKey, id)
local live = f[6] and f[6] ~= '' and redis.call('ZSCORE', orderListKey, f[6])
if f[3] ~= 'Aborted' or not live then return { 'ok', redis.call('ZREM', failedKey, id) } end
if score == '' then
  if listed then return { 'ok', 0 } end
  -- The score goes on as stored text: a Lua number would print with 14 digits only.
  redis.call('ZADD', failedKey, f[4] or f[5] or '0', id)
  return { 'ok', 1 }
end
if listed and tonumber(listed) == tonumber(score) then return { 'ok', 0 } end
redis.call('ZADD', failedKey, score, id)
return { 'ok', 1 }

--[[
  Index rebuild: re-establishes the index entries of one job response, if the document (and the
  by-order pointer) are still what the caller read. Every index key follows from a stored value
  (scope, state, order, the id the pointer names), so the script re-checks each of them and
  replies `retry` when one moved. Writes only index entries.

  KEYS[1] jobresponse:{id}                      hash    read only
  KEYS[2] jobresponse:list:{scope}              zset    holds the id with score = start time
  KEYS[3] jobresponse:bystate:{scope}:{state}   set     gains the id (unused when ARGV[4] is empty)
  KEYS[4] jobresponse:byorder:{order}           string  names the id unless another response that
                                                        carries this order holds it (unused when
                                                        ARGV[5] is empty)
  KEYS[5] jobresponse:{pointerId}               hash    read only: the response the pointer named
                                                        when the caller read it (unused when ARGV[7]
                                                        is empty, equals ARGV[1] or forms no key)
  KEYS[6] scopes                                set     gains the scope
  KEYS[7] jobresponse:oforder:{order}           zset    holds the id (added with score 0, the oldest,
                                                        when missing; unused when ARGV[5] is empty)

  Unused key slots hold the document key (KEYS[1]), as in put-jobresponse-12.lua.

  ARGV[1] id
  ARGV[2] version (v) the caller read
  ARGV[3] scope the caller read
  ARGV[4] state the caller read ("" = not indexed by state)
  ARGV[5] job order id the caller read ("" = none)
  ARGV[6] start field the caller read ("" = none, a document written before the field existed)
  ARGV[7] the id the by-order pointer named when the caller read it ("" = no pointer)
  ARGV[8] list score the caller computed from its read ("" = unknown: keep an existing score,
          else score 0)
  ARGV[9] nudge channel ({prefix}:nudge:changes), told about a newly registered scope

  Replies:
    {"ok", fixes}                  fixes = entries added or changed (0 = all were right)
    {"gone"}                       the document no longer exists; nothing written
    {"retry", storedValue}         the document or the pointer changed since the caller read them
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local docKey, listKey, stateKey, orderKey, pointedKey, scopesKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local responsesKey = KEYS[7]
local id, version, scope, state, order, start = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local pointer, score, channel = ARGV[7], ARGV[8], ARGV[9]

local checks = { { docKey, 'hash' }, { listKey, 'zset' }, { scopesKey, 'set' } }
if state ~= '' then table.insert(checks, { stateKey, 'set' }) end
if order ~= '' then
  table.insert(checks, { orderKey, 'string' })
  table.insert(checks, { responsesKey, 'zset' })
end
local badKey, badType, wantType = wrongType(checks)
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local f = redis.call('HMGET', docKey, 'v', 'scope', 'state', 'order', 'start')
if not f[1] then return { 'gone' } end
if f[1] ~= version or f[2] ~= scope or (f[3] or '') ~= state or (f[4] or '') ~= order or (f[5] or '') ~= start then
  return { 'retry', f[1] }
end
if order ~= '' then
  local current = redis.call('GET', orderKey) or ''
  if current ~= pointer then return { 'retry', current } end
end

local fixes = 0
local listed = redis.call('ZSCORE', listKey, id)
if score == '' then
  fixes = fixes + redis.call('ZADD', listKey, 'NX', 0, id)
elseif not listed or tonumber(listed) ~= tonumber(score) then
  -- The score goes on as the caller's text: a Lua number would print with 14 digits only.
  redis.call('ZADD', listKey, score, id)
  fixes = fixes + 1
end
if state ~= '' then fixes = fixes + redis.call('SADD', stateKey, id) end
-- A response written before the set existed has no write time: it ranks as the oldest.
if order ~= '' then fixes = fixes + redis.call('ZADD', responsesKey, 'NX', 0, id) end
if order ~= '' and pointer ~= id then
  -- Another response that still carries this order keeps the pointer (the later put won);
  -- a pointer to anything else (no document, another order, not a hash) is taken over.
  local holderKeeps = pointer ~= '' and pointedKey ~= docKey and redis.call('TYPE', pointedKey)['ok'] == 'hash'
    and redis.call('HGET', pointedKey, 'order') == order
  if not holderKeeps then
    redis.call('SET', orderKey, id)
    fixes = fixes + 1
  end
end
if redis.call('SADD', scopesKey, scope) == 1 then
  fixes = fixes + 1
  redis.call('PUBLISH', channel, scope)
end
return { 'ok', fixes }

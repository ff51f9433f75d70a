--[[
  Deletes a job response document and every index entry of it.

  KEYS[1] jobresponse:{id}                       hash
  KEYS[2] jobresponse:list:{scope}               zset   (scope as stored; the caller read it)
  KEYS[3] jobresponse:bystate:{scope}:{state}    set    (state as stored; unused when ARGV[3] is empty)
  KEYS[4] jobresponse:byorder:{orderId}          string (order as stored; deleted only if it still
                                                         names the id; unused when ARGV[4] is empty)
  KEYS[5] scopes                                 set    (only type-checked: a scope stays registered)
  KEYS[6] changes:{scope}                        stream
  KEYS[7] jobresponse:oforder:{orderId}          zset   loses the id; the pointer, if it names the id,
                                                        moves to the newest response left there
                                                        (unused when ARGV[4] is empty)
  KEYS[8] jobresponse:failed:{scope}             zset   loses the id

  Unused key slots hold the document key (KEYS[1]); see put-jobresponse-12.lua.

  ARGV[1] expected version (-1 unconditional, n > 0 must match)
  ARGV[2] scope the caller read
  ARGV[3] state the caller read ("" = none)
  ARGV[4] job order id the caller read ("" = none)
  ARGV[5] id
  ARGV[6] operation id
  ARGV[7] change word (delete, ...)
  ARGV[8] nudge channel

  Replies:
    {"ok", deletedVersion}
    {"notfound"}
    {"conflict", storedVersion}
    {"retry", storedValue}          the scope, state or order changed since the caller's read
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua
-- @include lib/append-change.lua
-- @include lib/release-order.lua

local docKey, listKey, stateKey, orderKey, scopesKey, changesKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local responsesKey, failedKey = KEYS[7], KEYS[8]
local expected = tonumber(ARGV[1])
local scope, state, order, id, op, change, channel = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8]

local checks = { { docKey, 'hash' }, { listKey, 'zset' }, { scopesKey, 'set' }, { changesKey, 'stream' }, { failedKey, 'zset' } }
if state ~= '' then table.insert(checks, { stateKey, 'set' }) end
if order ~= '' then
  table.insert(checks, { orderKey, 'string' })
  table.insert(checks, { responsesKey, 'zset' })
end
local badKey, badType, wantType = wrongType(checks)
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local stored = redis.call('HMGET', docKey, 'v', 'scope', 'state', 'order')
if not stored[1] then return { 'notfound' } end
local current = tonumber(stored[1])
if expected ~= -1 and expected ~= current then return { 'conflict', current } end
if stored[2] ~= scope then return { 'retry', stored[2] or '' } end
if (stored[3] or '') ~= state then return { 'retry', stored[3] or '' } end
if (stored[4] or '') ~= order then return { 'retry', stored[4] or '' } end

redis.call('DEL', docKey)
redis.call('ZREM', listKey, id)
redis.call('ZREM', failedKey, id)
if state ~= '' then redis.call('SREM', stateKey, id) end
if order ~= '' then releaseOrder(orderKey, responsesKey, id) end
appendChange(changesKey, channel, scope, 'jobresponse', id, change, current, op)
return { 'ok', current }

--[[
  Puts a job response document and maintains its indexes in one atomic step.

  KEYS[1] jobresponse:{id}                          hash   v, scope, state, order, start, op, doc (start: the list
                                                           score, kept so an index rebuild can recompute it)
  KEYS[2] jobresponse:list:{scope}                  zset   member id, score start time (epoch ms)
  KEYS[3] jobresponse:bystate:{scope}:{newState}    set    gains the id (unused when ARGV[4] is empty)
  KEYS[4] jobresponse:bystate:{scope}:{oldState}    set    loses the id (unused when ARGV[5] is empty)
  KEYS[5] jobresponse:byorder:{newOrderId}          string set to the id
  KEYS[6] jobresponse:byorder:{oldOrderId}          string deleted if it still names the id (unused when ARGV[7] is empty)
  KEYS[7] scopes                                    set    every scope with a document
  KEYS[8] changes:{scope}                           stream change entries, MAXLEN ~ 5000
  KEYS[9] jobresponse:oforder:{newOrderId}          zset   gains the id, scored by this write (server µs)
  KEYS[10] jobresponse:oforder:{oldOrderId}         zset   loses the id when the order changes; the old
                                                           pointer, if it names the id, moves to the newest
                                                           response left there (unused when ARGV[7] is empty)
  KEYS[11] jobresponse:failed:{scope}               zset   holds the id, scored by ARGV[13], while the new
                                                           state is a failure state (Aborted) and its job
                                                           order is live (in KEYS[12]); loses it otherwise
  KEYS[12] joborder:list:{scope}                    zset   read only: whether the new job order is live

  Unused key slots: a slot whose value (ARGV[4], ARGV[5] or ARGV[7]) is empty names no index key.
  The caller passes the document key (KEYS[1]) there, so every slot still holds a key this
  script is declared to touch, and the script never reads, type-checks or writes the slot.

  ARGV[1]  expected version (0 create only, -1 unconditional, n > 0 must match)
  ARGV[2]  scope
  ARGV[3]  id
  ARGV[4]  new normalized state ("" = not indexed by state)
  ARGV[5]  stored state as the caller read it ("" = none); the script checks it is still stored
  ARGV[6]  new job order id
  ARGV[7]  stored job order id as the caller read it ("" = none); checked like ARGV[5]
  ARGV[8]  start time (epoch ms; the list score and the `start` field, 0 when the response has none)
  ARGV[9]  doc (JSON text; validated by the caller)
  ARGV[10] operation id
  ARGV[11] change word (ResultUpdate, ..., or put)
  ARGV[12] nudge channel ({prefix}:nudge:changes)
  ARGV[13] end time (epoch ms; the failed-set score and the `end` field)

  Replies:
    {"ok", newVersion}
    {"conflict", storedVersion}
    {"scope", storedScope}
    {"retry", storedValue}        the stored state or order moved since the caller read it:
                                  its index keys are stale, read again and retry
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua
-- @include lib/check-version.lua
-- @include lib/release-order.lua
-- @include lib/jobresponse-write.lua

local docKey, listKey, newStateKey, oldStateKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local newOrderKey, oldOrderKey, scopesKey, changesKey = KEYS[5], KEYS[6], KEYS[7], KEYS[8]
local newResponsesKey, oldResponsesKey, failedKey, ordersKey = KEYS[9], KEYS[10], KEYS[11], KEYS[12]
local expected = tonumber(ARGV[1])
local scope, id, newState, oldState, newOrder, oldOrder = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local startTime, doc, op, change, channel, endTime = ARGV[8], ARGV[9], ARGV[10], ARGV[11], ARGV[12], ARGV[13]

local checks = { { docKey, 'hash' }, { listKey, 'zset' }, { newOrderKey, 'string' }, { scopesKey, 'set' }, { changesKey, 'stream' },
  { newResponsesKey, 'zset' }, { failedKey, 'zset' }, { ordersKey, 'zset' } }
if newState ~= '' then table.insert(checks, { newStateKey, 'set' }) end
if oldState ~= '' then table.insert(checks, { oldStateKey, 'set' }) end
if oldOrder ~= '' then
  table.insert(checks, { oldOrderKey, 'string' })
  table.insert(checks, { oldResponsesKey, 'zset' })
end
local badKey, badType, wantType = wrongType(checks)
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local versionOk, current = checkVersion(docKey, expected)
if not versionOk then return { 'conflict', current } end

local stored = redis.call('HMGET', docKey, 'scope', 'state', 'order')
if stored[1] and stored[1] ~= scope then return { 'scope', stored[1] } end
-- The old index keys came from the caller's read; a write since then makes them stale.
local storedState, storedOrder = stored[2] or '', stored[3] or ''
if storedState ~= oldState then return { 'retry', storedState } end
if storedOrder ~= oldOrder then return { 'retry', storedOrder } end

local version = current + 1
if oldState ~= '' and oldState ~= newState then redis.call('SREM', oldStateKey, id) end
-- Another response may have claimed the old order since; its pointer is not ours to move.
if oldOrder ~= '' and oldOrder ~= newOrder then releaseOrder(oldOrderKey, oldResponsesKey, id) end
jobResponseWrite({
  docKey = docKey, listKey = listKey, stateKey = newStateKey, orderKey = newOrderKey, ofOrderKey = newResponsesKey, scopesKey = scopesKey,
  changesKey = changesKey, failedKey = failedKey, ordersKey = ordersKey, scope = scope, id = id, state = newState, orderId = newOrder, startTime = startTime,
  endTime = endTime, doc = doc, op = op,
  change = change, channel = channel
}, version)
return { 'ok', version }

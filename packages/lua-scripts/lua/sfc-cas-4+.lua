--[[
  Compare-and-set of one SFC job's execution state, with every index of it, in one atomic step.
  The engine computes everything from the old and new state; this script
  only checks the version and applies what it is given.

  KEYS: 4 fixed keys, then a variable tail (the "+" in the file name), in this order:
  KEYS[1] sfc:state:{jobId}               hash   v, scope, op, doc
  KEYS[2] sfc:work:{scope}                stream work and outbox entries, never capped (no MAXLEN)
  KEYS[3] sfc:due:{scope}                 zset   job id, score = next deadline (epoch ms)
  KEYS[4] sfc:active:{scope}              set    job ids whose execution is not terminal
  tail:
    sfc:event:{scope}:{source}|{id}       string only when ARGV[9] = 1: the event this write applies
    sfc:waits:{scope}:{typeId} x ARGV[10] zset   waits sets the job joins (ZADD NX: first start kept)
    sfc:waits:{scope}:{typeId} x ARGV[11] zset   waits sets whose wait start moves (ZADD: new start)
    sfc:waits:{scope}:{typeId} x ARGV[12] zset   waits sets the job leaves (ZREM)
    per keyed wait joined or moved (ARGV[14] of them), then per keyed wait left (ARGV[15]), two keys:
      sfc:keyed:{scope}:{typeId}:{place}:{value}   zset   the keyed wait (lib/sfc-keyed-waits.lua)
      sfc:keyplaces:{scope}:{typeId}               hash   its type's places
    sfc:correlation:{correlationId} x P   string only with the trailer: pointers set to the job id
    joborder:{jobId}                      hash   only with the trailer and R = 1: read after the write

  ARGV[1]  expected version: 0 = create only, n > 0 = must equal the stored version
  ARGV[2]  scope (immutable once stored)
  ARGV[3]  job id (the member in due, active and waits)
  ARGV[4]  operation id
  ARGV[5]  doc (state JSON text; validated by the caller)
  ARGV[6]  next deadline in epoch ms, or "" = no deadline (the job leaves sfc:due)
  ARGV[7]  "1" = the job is active (SADD), "0" = not (SREM)
  ARGV[8]  nudge channel ({prefix}:nudge:sfc), published with the scope when entries were appended;
           "" = no nudge (the writer handles its entries itself; the consumers' fallback poll reads them)
  ARGV[9]  "1" = an applied event key is the first tail key, "0" = none
  ARGV[10] number of waits sets joined (J)
  ARGV[11] number of waits sets with a moved wait start (M)
  ARGV[12] number of waits sets left (L)
  ARGV[13] lifetime of the applied-event key in ms
  ARGV[14] number of keyed waits joined or moved (KJ)
  ARGV[15] number of keyed waits left (KL)
  then J wait starts (epoch ms), one per joined waits set, in tail order;
  then M wait starts, one per moved waits set, in tail order;
  then per keyed wait joined its place, its wait start and "1" when the start replaces the stored
  one (a moved wait) or "0" when the first start is kept, in tail order;
  then per keyed wait left its place, in tail order;
  then the entry count E; then per entry its item count n (even, > 0) and n items
  field1, value1, field2, value2, ... (XADD field/value pairs, never JSON)
  then, optionally, the trailer of a direct send (the writer sends its commands itself):
  the pointer count P, the pointers' lifetime in ms, and R ("1" = read the job order, "0" = not),
  and with R = 1 the job order version the writer holds (0 = none)

  Replies:
    {"ok", newVersion, entryId1, entryId2, ...}   one stream id per entry, in order
    {"ok", newVersion, entryId1, ..., "joborder", v, doc}   with R = 1: the job order's version
                                                  after the write (0 when it does not exist) and its
                                                  doc field (false when it does not exist, or when v
                                                  is the version the writer holds)
    {"conflict", storedVersion}                   0 when the state does not exist
    {"scope", storedScope}
    {"duplicate", jobId}                          the event was already applied (to jobId)
    {"wrongtype", key, actualType, expectedType}
  Nothing is written unless the reply is "ok". Malformed arguments are an error reply (a bug in
  the caller), raised before any write.
]]
-- @include lib/sfc-job.lua

local stateKey, workKey, dueKey, activeKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local expected = tonumber(ARGV[1])
local scope, jobId, op, doc = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local due, active, channel = ARGV[6], ARGV[7] == '1', ARGV[8]
local hasEvent = ARGV[9] == '1'
local joinCount, moveCount, leaveCount = tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12])
local eventLifetime = ARGV[13]
local keyedJoinCount, keyedLeaveCount = tonumber(ARGV[14]), tonumber(ARGV[15])

local function bad(what) return redis.error_reply('sfc-cas: malformed arguments: ' .. what) end

if not expected or not joinCount or not moveCount or not leaveCount or not tonumber(eventLifetime) or not keyedJoinCount or not keyedLeaveCount then
  return bad('counts')
end
if due ~= '' and not tonumber(due) then return bad('deadline') end

-- The variable part of ARGV: wait starts, then the entries, then the optional trailer.
local joinSince, moveSince, keyedJoins, keyedLeaves, entries, what
local cursor = 16
joinSince, cursor = sfcReadStarts(cursor, joinCount)
if not joinSince then return bad('wait start') end
moveSince, cursor = sfcReadStarts(cursor, moveCount)
if not moveSince then return bad('moved wait start') end
keyedJoins, cursor = sfcReadKeyedJoins(cursor, keyedJoinCount)
if not keyedJoins then return bad('keyed wait') end
keyedLeaves, cursor = sfcReadKeyedLeaves(cursor, keyedLeaveCount)
if not keyedLeaves then return bad('keyed wait left') end
entries, cursor, what = sfcReadEntries(cursor)
if not entries then return bad(what) end
local pointerCount, pointerLifetime, readOrder, heldOrderVersion = 0, false, false, '0'
if cursor <= #ARGV then
  pointerCount, pointerLifetime, readOrder = tonumber(ARGV[cursor]), ARGV[cursor + 1], ARGV[cursor + 2] == '1'
  if not pointerCount or not tonumber(pointerLifetime) or (ARGV[cursor + 2] ~= '0' and ARGV[cursor + 2] ~= '1') then
    return bad('direct-send trailer')
  end
  cursor = cursor + 3
  if readOrder then
    heldOrderVersion = sfcHeldVersion(ARGV[cursor])
    if not heldOrderVersion then return bad('held job order version') end
    cursor = cursor + 1
  end
end
if cursor - 1 ~= #ARGV then return bad('ARGV length does not match the counts') end

-- The tail of KEYS, split as ARGV[9..15] and the trailer describe it.
local nextKey = 5
local eventKeys = {}
if hasEvent then
  eventKeys[1] = KEYS[nextKey]
  nextKey = nextKey + 1
end
local joinKeys, moveKeys, leaveKeys, pointerKeys
joinKeys, nextKey = sfcTakeKeys(nextKey, joinCount)
moveKeys, nextKey = sfcTakeKeys(nextKey, moveCount)
leaveKeys, nextKey = sfcTakeKeys(nextKey, leaveCount)
nextKey = sfcTakeKeyedKeys(keyedJoins, nextKey)
nextKey = sfcTakeKeyedKeys(keyedLeaves, nextKey)
pointerKeys, nextKey = sfcTakeKeys(nextKey, pointerCount)
local orderKey = false
if readOrder then
  orderKey = KEYS[nextKey]
  nextKey = nextKey + 1
end
if nextKey - 1 ~= #KEYS then return bad('KEYS tail does not match the counts') end

local job = {
  stateKey = stateKey, workKey = workKey, dueKey = dueKey, activeKey = activeKey,
  expected = expected, scope = scope, jobId = jobId, op = op, doc = doc, due = due, active = active,
  eventKeys = eventKeys, eventLifetime = eventLifetime,
  joinKeys = joinKeys, joinSince = joinSince, moveKeys = moveKeys, moveSince = moveSince, leaveKeys = leaveKeys,
  keyedJoins = keyedJoins, keyedLeaves = keyedLeaves,
  entries = entries, pointerKeys = pointerKeys, pointerLifetime = pointerLifetime, orderKey = orderKey, heldOrderVersion = heldOrderVersion
}

-- Validate everything before the first write: Valkey never rolls a script back.
local badKey, badType, wantType = sfcJobWrongType(job)
if badKey then return { 'wrongtype', badKey, badType, wantType } end

-- A redelivered event is a no-op even after the state moved on, so this comes before the version.
local heldAt, holder = sfcJobHeld(job)
if heldAt then return { 'duplicate', holder } end

local refused, current = sfcJobRefused(job)
if refused then return refused end

local reply = sfcJobApply(job, current + 1)
if #entries > 0 and channel ~= '' then redis.call('PUBLISH', channel, scope) end
return reply

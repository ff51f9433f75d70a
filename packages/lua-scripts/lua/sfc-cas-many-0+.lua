--[[
  Compare-and-set of many SFC jobs' execution states in one call: each job exactly as
  sfc-cas-4+ writes one (the same checks, in the same order, and the same writes), except that a
  job may record several applied events. Each job is checked on its own: a job that is refused
  (conflict, scope, duplicate, wrongtype) writes nothing of its own, and the other jobs are
  written. The jobs are applied in order, so a later job sees what an earlier one wrote (an
  event recorded by job 1 is a duplicate for job 2).

  KEYS: no fixed keys (the "0" in the file name); per job, in job order, a block of keys:
    sfc:state:{jobId}                     hash   v, scope, op, doc
    sfc:work:{scope}                      stream work and outbox entries, never capped (no MAXLEN)
    sfc:due:{scope}                       zset   job id, score = next deadline (epoch ms)
    sfc:active:{scope}                    set    job ids whose execution is not terminal
    sfc:event:{scope}:{source}|{id} x V   string the events this write applies
    sfc:waits:{scope}:{typeId} x J        zset   waits sets the job joins (ZADD NX: first start kept)
    sfc:waits:{scope}:{typeId} x M        zset   waits sets whose wait start moves (ZADD: new start)
    sfc:waits:{scope}:{typeId} x L        zset   waits sets the job leaves (ZREM)
    per keyed wait joined or moved (KJ), then per keyed wait left (KL), two keys:
      sfc:keyed:{scope}:{typeId}:{place}:{value}   zset   the keyed wait (lib/sfc-keyed-waits.lua)
      sfc:keyplaces:{scope}:{typeId}               hash   its type's places
    sfc:correlation:{correlationId} x P   string pointers set to the job id (any type is replaced)
    joborder:{jobId}                      hash   only when R = 1: read after the write
    joborder:{id}, joborder:list:{scope}, scopes, changes:{scope}, joborder:search:{scope}   only when G = 1: the job order
                                                  move written with the job (lib/joborder-move.lua)
    jobresponse:{id}, jobresponse:list:{scope}, jobresponse:bystate:{scope}:{state} (the response
    doc key when its state is ""), jobresponse:byorder:{orderId}, jobresponse:oforder:{orderId},
    scopes, changes:{scope}, jobresponse:failed:{scope}, joborder:list:{scope}   only when Q = 1: the job response created with the
                                                  job (lib/jobresponse-create.lua)

  ARGV[1]  nudge channel ({prefix}:nudge:sfc); "" = no nudge for any job
  ARGV[2]  number of jobs N (a job id may appear once)
  ARGV[3]  lifetime of the applied-event keys in ms
  then per job, in job order, a block:
    expected version: 0 = create only, n > 0 = must equal the stored version
    scope (immutable once stored)
    job id (the member in due, active and waits)
    operation id
    doc (state JSON text; validated by the caller)
    next deadline in epoch ms, or "" = no deadline (the job leaves sfc:due)
    "1" = the job is active (SADD), "0" = not (SREM)
    "1" = its entries nudge, "0" = not (the writer handles its entries itself)
    V, the number of applied-event keys
    J, M, L: the numbers of waits sets joined, moved and left
    P, the number of correlation pointers, and their lifetime in ms (any number when P = 0)
    R: "1" = read the job order after the write, "0" = not
    G: "1" = a job order move is written with the job, "2" = one with its search facts, "0" = none
    Q: "1" = a job response is created with the job, "0" = not
    KJ, KL: the numbers of keyed waits joined (or moved) and left
    then J wait starts (epoch ms), one per joined waits set, in key order;
    then M wait starts, one per moved waits set, in key order;
    then per keyed wait joined its place, its wait start and "1" when the start replaces the
    stored one (a moved wait) or "0" when the first start is kept, in key order;
    then per keyed wait left its place, in key order;
    then the entry count E; then per entry its item count n (even, > 0) and n items
    field1, value1, field2, value2, ... (XADD field/value pairs, never JSON)
    then, when G = 1 or 2, the move: expected job order version (> 0), its scope, job order id,
    priority, doc, operation id, change word, origin ("" = none), changes nudge channel, and when
    G = 2 its search facts as put-joborder-7's ARGV[12] to ARGV[14] (state text, work master id,
    error: the Aborted comment, at most 500 bytes); with G = 1 the move's doc is decoded for them
    then, when Q = 1, the response: its scope, id, normalized state ("" = not indexed), job order
    id, start time (epoch ms), doc, operation id, change word, changes nudge channel, end time (epoch ms)
    then, when R = 1, the job order version the writer holds (0 = none)

  Replies: an array with one reply per job, in job order:
    {"ok", newVersion, entryId1, entryId2, ...}   one stream id per entry, in order
    {"ok", newVersion, entryId1, ..., "joborder", v, doc}   with R = 1: the job order's version
                                                  after the write (0 when it does not exist) and
                                                  its doc field (false when it does not exist, or
                                                  when v is the version the writer holds or the one
                                                  its move wrote)
    {"ok", newVersion, entryId1, ..., "moved", v, ["joborder", v, doc]}   with G = 1: the job order's
                                                  version after the move, 0 when it was not written
                                                  (another version, scope or type: never a refusal)
    {..., "responded", v, ...}                    with Q = 1 (after "moved"): 1 when the response was
                                                  created, 0 when it was not (it exists, or a type)
    {"conflict", storedVersion}                   0 when the state does not exist
    {"scope", storedScope}
    {"duplicate", eventIndex, jobId}              the job's event at eventIndex (0-based among
                                                  its V events) was already applied (to jobId)
    {"wrongtype", key, actualType, expectedType}
  A job's state, indexes and events are written only when its reply is "ok". The nudge is
  published once per scope in which an "ok" job with nudging entries appended some. Malformed
  arguments (counts that do not match, a number that is none, a job id twice) are an error reply
  for the whole call (a bug in the caller), raised before any job is written.
]]
-- @include lib/sfc-job.lua

local channel, jobCount, eventLifetime = ARGV[1], tonumber(ARGV[2]), ARGV[3]

local function bad(what) return redis.error_reply('sfc-cas-many: malformed arguments: ' .. what) end

local function isCount(value)
  local n = tonumber(value)
  return n and n >= 0 and n % 1 == 0 and n or nil
end

local function isFlag(value) return value == '0' or value == '1' end

-- The job order move's block from ARGV[cursor] for flag G: the move (false when G = 0) and the
-- next cursor, or nil and what is malformed.
local function readMove(flag, cursor)
  if flag == '0' then return false, cursor end
  local expected = tonumber(ARGV[cursor])
  if not expected or expected <= 0 or not tonumber(ARGV[cursor + 3]) or ARGV[cursor + 8] == nil then return nil, 'move' end
  local move = {
    expected = expected, scope = ARGV[cursor + 1], id = ARGV[cursor + 2], priority = ARGV[cursor + 3], doc = ARGV[cursor + 4],
    op = ARGV[cursor + 5], change = ARGV[cursor + 6], origin = ARGV[cursor + 7], channel = ARGV[cursor + 8]
  }
  if flag == '1' then return move, cursor + 9 end
  local what
  move.facts, what = searchPassedFacts(ARGV[cursor + 9], ARGV[cursor + 10], ARGV[cursor + 11])
  if not move.facts then return nil, 'move ' .. what end
  return move, cursor + 12
end

-- The job response's block from ARGV[cursor] when `present`, as readMove.
local function readResponse(present, cursor)
  if not present then return false, cursor end
  if not tonumber(ARGV[cursor + 4]) or not tonumber(ARGV[cursor + 9]) then return nil end
  return {
    scope = ARGV[cursor], id = ARGV[cursor + 1], state = ARGV[cursor + 2], orderId = ARGV[cursor + 3], startTime = ARGV[cursor + 4],
    doc = ARGV[cursor + 5], op = ARGV[cursor + 6], change = ARGV[cursor + 7], channel = ARGV[cursor + 8], endTime = ARGV[cursor + 9]
  }, cursor + 10
end

-- One job's block of ARGV from `cursor` and of KEYS from `nextKey`: the job, the next cursor and
-- key index, or nil and what is malformed.
local function readJob(cursor, nextKey)
  local a = cursor
  local expected, due = tonumber(ARGV[a]), ARGV[a + 5]
  local eventCount, joinCount, moveCount, leaveCount = isCount(ARGV[a + 8]), isCount(ARGV[a + 9]), isCount(ARGV[a + 10]), isCount(ARGV[a + 11])
  local pointerCount, pointerLifetime = isCount(ARGV[a + 12]), ARGV[a + 13]
  local keyedJoinCount, keyedLeaveCount = isCount(ARGV[a + 17]), isCount(ARGV[a + 18])
  if not expected or not eventCount or not joinCount or not moveCount or not leaveCount or not pointerCount then return nil, 'counts' end
  if not keyedJoinCount or not keyedLeaveCount then return nil, 'counts' end
  if not tonumber(pointerLifetime) then return nil, 'pointer lifetime' end
  if due == nil or (due ~= '' and not tonumber(due)) then return nil, 'deadline' end
  if not isFlag(ARGV[a + 6]) or not isFlag(ARGV[a + 7]) or not isFlag(ARGV[a + 14]) or not isFlag(ARGV[a + 16]) then return nil, 'flags' end
  if not isFlag(ARGV[a + 15]) and ARGV[a + 15] ~= '2' then return nil, 'flags' end
  local job = {
    expected = expected, scope = ARGV[a + 1], jobId = ARGV[a + 2], op = ARGV[a + 3], doc = ARGV[a + 4], due = due,
    active = ARGV[a + 6] == '1', nudge = ARGV[a + 7] == '1', eventLifetime = eventLifetime, pointerLifetime = pointerLifetime
  }
  local what
  job.joinSince, cursor = sfcReadStarts(a + 19, joinCount)
  if not job.joinSince then return nil, 'wait start' end
  job.moveSince, cursor = sfcReadStarts(cursor, moveCount)
  if not job.moveSince then return nil, 'moved wait start' end
  job.keyedJoins, cursor = sfcReadKeyedJoins(cursor, keyedJoinCount)
  if not job.keyedJoins then return nil, 'keyed wait' end
  job.keyedLeaves, cursor = sfcReadKeyedLeaves(cursor, keyedLeaveCount)
  if not job.keyedLeaves then return nil, 'keyed wait left' end
  job.entries, cursor, what = sfcReadEntries(cursor)
  if not job.entries then return nil, what end
  job.move, cursor = readMove(ARGV[a + 15], cursor)
  if job.move == nil then return nil, cursor end
  job.response, cursor = readResponse(ARGV[a + 16] == '1', cursor)
  if job.response == nil then return nil, 'response' end
  job.heldOrderVersion = '0'
  if ARGV[a + 14] == '1' then
    job.heldOrderVersion = sfcHeldVersion(ARGV[cursor])
    if not job.heldOrderVersion then return nil, 'held job order version' end
    cursor = cursor + 1
  end
  job.stateKey, job.workKey, job.dueKey, job.activeKey = KEYS[nextKey], KEYS[nextKey + 1], KEYS[nextKey + 2], KEYS[nextKey + 3]
  job.eventKeys, nextKey = sfcTakeKeys(nextKey + 4, eventCount)
  job.joinKeys, nextKey = sfcTakeKeys(nextKey, joinCount)
  job.moveKeys, nextKey = sfcTakeKeys(nextKey, moveCount)
  job.leaveKeys, nextKey = sfcTakeKeys(nextKey, leaveCount)
  nextKey = sfcTakeKeyedKeys(job.keyedJoins, nextKey)
  nextKey = sfcTakeKeyedKeys(job.keyedLeaves, nextKey)
  job.pointerKeys, nextKey = sfcTakeKeys(nextKey, pointerCount)
  job.orderKey = false
  if ARGV[a + 14] == '1' then
    job.orderKey = KEYS[nextKey]
    nextKey = nextKey + 1
  end
  if job.move then
    job.move.docKey, job.move.listKey, job.move.scopesKey, job.move.changesKey = KEYS[nextKey], KEYS[nextKey + 1], KEYS[nextKey + 2], KEYS[nextKey + 3]
    job.move.searchKey = KEYS[nextKey + 4]
    nextKey = nextKey + 5
  end
  if job.response then
    local r = job.response
    r.docKey, r.listKey, r.stateKey, r.orderKey = KEYS[nextKey], KEYS[nextKey + 1], KEYS[nextKey + 2], KEYS[nextKey + 3]
    r.ofOrderKey, r.scopesKey, r.changesKey, r.failedKey = KEYS[nextKey + 4], KEYS[nextKey + 5], KEYS[nextKey + 6], KEYS[nextKey + 7]
    r.ordersKey = KEYS[nextKey + 8]
    nextKey = nextKey + 9
  end
  return job, cursor, nextKey
end

-- Read and check every job's arguments before the first write: Valkey never rolls a script back.
if not isCount(jobCount) or not tonumber(eventLifetime) then return bad('counts') end
local jobs, seen = {}, {}
local cursor, nextKey = 4, 1
for i = 1, jobCount do
  local job, nextCursor, afterKeys = readJob(cursor, nextKey)
  if not job then return bad(nextCursor .. ' (job ' .. i .. ')') end
  if seen[job.jobId] then return bad('job id ' .. job.jobId .. ' twice') end
  seen[job.jobId] = true
  jobs[i] = job
  cursor, nextKey = nextCursor, afterKeys
end
if cursor - 1 ~= #ARGV then return bad('ARGV length does not match the counts') end
if nextKey - 1 ~= #KEYS then return bad('KEYS do not match the counts') end

-- Every job's key types, before any job writes. The scope's keys are shared by the jobs of a
-- scope: a key found of the right type is not asked again (nothing before the writes changes it).
local replies = {}
local typesOk = {}
for i, job in ipairs(jobs) do
  local badKey, badType, wantType = sfcJobWrongType(job, typesOk)
  if badKey then replies[i] = { 'wrongtype', badKey, badType, wantType } end
end

local nudged, nudgeOrder = {}, {}
for i, job in ipairs(jobs) do
  if not replies[i] then
    -- A redelivered event is a no-op even after the state moved on, so this comes before the version.
    local heldAt, holder = sfcJobHeld(job)
    if heldAt then
      replies[i] = { 'duplicate', heldAt - 1, holder }
    else
      local refused, current = sfcJobRefused(job)
      replies[i] = refused or sfcJobApply(job, current + 1)
      if not refused and #job.entries > 0 and job.nudge and not nudged[job.scope] then
        nudged[job.scope] = true
        nudgeOrder[#nudgeOrder + 1] = job.scope
      end
    end
  end
end

if channel ~= '' then
  for _, scope in ipairs(nudgeOrder) do redis.call('PUBLISH', channel, scope) end
end
return replies

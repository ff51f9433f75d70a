-- One SFC job's compare-and-set, shared by sfc-cas-4+ (one job per call) and sfc-cas-many-0+
-- (many jobs per call). A job is a table:
--   stateKey, workKey, dueKey, activeKey   the four keys every write names
--   expected, scope, jobId, op, doc        the version check and what the state hash stores
--   due ('' = none), active (boolean)
--   eventKeys                              applied-event keys (strings) recorded with the write
--   eventLifetime                          their lifetime in ms
--   joinKeys/joinSince, moveKeys/moveSince, leaveKeys   the waits sets and their wait starts
--   keyedJoins, keyedLeaves                keyed waits joined (or moved) and left (lib/sfc-keyed-waits.lua)
--   entries                                per entry its XADD field/value items
--   pointerKeys, pointerLifetime           correlation pointers set to the job id
--   orderKey                               job order read after the write, or false
--   heldOrderVersion                       the job order version the writer holds ('0' = none): its
--                                          doc is not sent back when the stored version is that one
--                                          (nor when it is the version the job's move wrote)
--   move                                   a job order move written with it (lib/joborder-move.lua), or false
--   response                               a job response created with it (lib/jobresponse-create.lua), or false
-- The checks run in this order: sfcJobWrongType (before anything of any job is written), then
-- sfcJobHeld (a redelivered event is a no-op even after the state moved on), then sfcJobRefused
-- (version, scope); only then sfcJobApply. The caller publishes the nudge.
-- @include lib/check-types.lua
-- @include lib/check-version.lua
-- @include lib/joborder-move.lua
-- @include lib/jobresponse-create.lua
-- @include lib/sfc-keyed-waits.lua

-- `count` wait starts (epoch ms) from ARGV[cursor]; the list and the next cursor, or nil.
local function sfcReadStarts(cursor, count)
  local since = {}
  for i = 1, count do
    since[i] = ARGV[cursor]
    if not tonumber(since[i]) then return nil end
    cursor = cursor + 1
  end
  return since, cursor
end

-- The held job order version of a direct send's read (a non-negative integer) as the job order
-- hash stores versions, or nil when it is none.
local function sfcHeldVersion(value)
  local held = tonumber(value)
  if not held or held < 0 or held % 1 ~= 0 then return nil end
  return tostring(held)
end

-- The entries from ARGV[cursor]: their count E, then per entry its item count n (even, > 0) and
-- n items. The entries and the next cursor, or nil, the cursor and what is malformed.
local function sfcReadEntries(cursor)
  local entryCount = tonumber(ARGV[cursor])
  if not entryCount then return nil, cursor, 'entry count' end
  cursor = cursor + 1
  local entries = {}
  for e = 1, entryCount do
    local n = tonumber(ARGV[cursor])
    if not n or n <= 0 or n % 2 ~= 0 then return nil, cursor, 'entry item count' end
    local items = {}
    for j = 1, n do items[j] = ARGV[cursor + j] end
    entries[e] = items
    cursor = cursor + n + 1
  end
  return entries, cursor
end

-- `count` keys from KEYS[nextKey]; the list and the next key index.
local function sfcTakeKeys(nextKey, count)
  local keys = {}
  for i = 1, count do keys[i] = KEYS[nextKey + i - 1] end
  return keys, nextKey + count
end

-- The key of the job that holds another type, its type and the expected one; nil when none.
-- The pointers and the job order are not the state's: SET replaces a pointer of any type, and a
-- job order that is no hash reads as missing rather than failing the engine's write.
-- `known` (optional): key -> type already found right in this call; those keys are not asked
-- again, and this job's keys join it when all are right.
local function sfcJobWrongType(job, known)
  local typed = {}
  local function want(k, t)
    if not known or known[k] ~= t then typed[#typed + 1] = { k, t } end
  end
  want(job.stateKey, 'hash')
  want(job.workKey, 'stream')
  want(job.dueKey, 'zset')
  want(job.activeKey, 'set')
  for _, k in ipairs(job.eventKeys) do want(k, 'string') end
  for _, k in ipairs(job.joinKeys) do want(k, 'zset') end
  for _, k in ipairs(job.moveKeys) do want(k, 'zset') end
  for _, k in ipairs(job.leaveKeys) do want(k, 'zset') end
  local keyed = {}
  sfcKeyedTypes(job.keyedJoins, keyed)
  sfcKeyedTypes(job.keyedLeaves, keyed)
  for _, pair in ipairs(keyed) do want(pair[1], pair[2]) end
  local badKey, badType, wantType = wrongType(typed)
  if known and not badKey then
    for _, pair in ipairs(typed) do known[pair[1]] = pair[2] end
  end
  return badKey, badType, wantType
end

-- The index (1-based) of the first applied-event key already held, and the job holding it; nil when none.
local function sfcJobHeld(job)
  for i, k in ipairs(job.eventKeys) do
    local holder = redis.call('GET', k)
    if holder then return i, holder end
  end
  return nil
end

-- The refusal of the version or scope check ({"conflict", stored} or {"scope", stored}), or nil
-- and the stored version.
local function sfcJobRefused(job)
  local versionOk, current = checkVersion(job.stateKey, job.expected)
  if not versionOk then return { 'conflict', current } end
  local storedScope = redis.call('HGET', job.stateKey, 'scope')
  if storedScope and storedScope ~= job.scope then return { 'scope', storedScope } end
  return nil, current
end

-- Writes the checked job as `version`; the reply
-- {"ok", version, entryId..., ["moved", jobOrderVersion], ["responded", responseVersion], ["joborder", v, doc]}
-- ("moved" with a move, "responded" with a response, each 0 when it was not written; the job
-- order read after the move: its version, 0 when it is missing, and its doc, false when missing
-- or when the version is the one the writer holds or the one its move wrote).
local function sfcJobApply(job, version)
  local jobId = job.jobId
  redis.call('HSET', job.stateKey, 'v', tostring(version), 'scope', job.scope, 'op', job.op, 'doc', job.doc)
  for _, k in ipairs(job.eventKeys) do redis.call('SET', k, jobId, 'PX', job.eventLifetime) end
  local reply = { 'ok', version }
  for _, items in ipairs(job.entries) do
    reply[#reply + 1] = redis.call('XADD', job.workKey, '*', unpack(items))
  end
  if job.due == '' then
    redis.call('ZREM', job.dueKey, jobId)
  else
    redis.call('ZADD', job.dueKey, job.due, jobId)
  end
  if job.active then
    redis.call('SADD', job.activeKey, jobId)
  else
    redis.call('SREM', job.activeKey, jobId)
  end
  for i, k in ipairs(job.joinKeys) do redis.call('ZADD', k, 'NX', job.joinSince[i], jobId) end
  for i, k in ipairs(job.moveKeys) do redis.call('ZADD', k, job.moveSince[i], jobId) end
  for _, k in ipairs(job.leaveKeys) do redis.call('ZREM', k, jobId) end
  for _, wait in ipairs(job.keyedJoins) do sfcKeyedJoin(wait, jobId) end
  for _, wait in ipairs(job.keyedLeaves) do sfcKeyedLeave(wait, jobId) end
  for _, k in ipairs(job.pointerKeys) do redis.call('SET', k, jobId, 'PX', job.pointerLifetime) end
  local held = job.heldOrderVersion
  if job.move then
    local moved = jobOrderMoveApply(job.move)
    reply[#reply + 1] = 'moved'
    reply[#reply + 1] = moved
    -- The writer has the document its move wrote.
    if moved > 0 and job.move.docKey == job.orderKey then held = tostring(moved) end
  end
  if job.response then
    reply[#reply + 1] = 'responded'
    reply[#reply + 1] = jobResponseCreate(job.response)
  end
  if job.orderKey then
    local orderType = redis.call('TYPE', job.orderKey)['ok']
    local stored = orderType == 'hash' and redis.call('HGET', job.orderKey, 'v') or false
    reply[#reply + 1] = 'joborder'
    reply[#reply + 1] = tonumber(stored) or 0
    -- The writer's held copy is that version: the document need not travel (about 1 kB a step).
    reply[#reply + 1] = stored and stored ~= held and redis.call('HGET', job.orderKey, 'doc') or false
  end
  return reply
end

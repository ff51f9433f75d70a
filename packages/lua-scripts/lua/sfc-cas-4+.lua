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
  then J wait starts (epoch ms), one per joined waits set, in tail order;
  then M wait starts, one per moved waits set, in tail order;
  then the entry count E; then per entry its item count n (even, > 0) and n items
  field1, value1, field2, value2, ... (XADD field/value pairs, never JSON)
  then, optionally, the trailer of a direct send (the writer sends its commands itself):
  the pointer count P, the pointers' lifetime in ms, and R ("1" = read the job order, "0" = not)

  Replies:
    {"ok", newVersion, entryId1, entryId2, ...}   one stream id per entry, in order
    {"ok", newVersion, entryId1, ..., "joborder", doc}   with R = 1: the job order's doc field
                                                  after the write (false when it does not exist)
    {"conflict", storedVersion}                   0 when the state does not exist
    {"scope", storedScope}
    {"duplicate", jobId}                          the event was already applied (to jobId)
    {"wrongtype", key, actualType, expectedType}
  Nothing is written unless the reply is "ok". Malformed arguments are an error reply (a bug in
  the caller), raised before any write.
]]
-- @include lib/check-types.lua
-- @include lib/check-version.lua

local stateKey, workKey, dueKey, activeKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local expected = tonumber(ARGV[1])
local scope, jobId, op, doc = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local due, active, channel = ARGV[6], ARGV[7] == '1', ARGV[8]
local hasEvent = ARGV[9] == '1'
local joinCount, moveCount, leaveCount = tonumber(ARGV[10]), tonumber(ARGV[11]), tonumber(ARGV[12])
local eventLifetime = ARGV[13]

local function bad(what) return redis.error_reply('sfc-cas: malformed arguments: ' .. what) end

if not expected or not joinCount or not moveCount or not leaveCount or not tonumber(eventLifetime) then return bad('counts') end
if due ~= '' and not tonumber(due) then return bad('deadline') end

-- The variable part of ARGV: wait starts, then the entries, then the optional trailer.
local cursor = 14
local joinSince, moveSince = {}, {}
for i = 1, joinCount do
  joinSince[i] = ARGV[cursor]
  if not tonumber(joinSince[i]) then return bad('wait start') end
  cursor = cursor + 1
end
for i = 1, moveCount do
  moveSince[i] = ARGV[cursor]
  if not tonumber(moveSince[i]) then return bad('moved wait start') end
  cursor = cursor + 1
end
local entryCount = tonumber(ARGV[cursor])
if not entryCount then return bad('entry count') end
cursor = cursor + 1
local entries = {}
for e = 1, entryCount do
  local n = tonumber(ARGV[cursor])
  if not n or n <= 0 or n % 2 ~= 0 then return bad('entry item count') end
  local items = {}
  for j = 1, n do items[j] = ARGV[cursor + j] end
  entries[e] = items
  cursor = cursor + n + 1
end
local pointerCount, pointerLifetime, readOrder = 0, false, false
if cursor <= #ARGV then
  pointerCount, pointerLifetime, readOrder = tonumber(ARGV[cursor]), ARGV[cursor + 1], ARGV[cursor + 2] == '1'
  if not pointerCount or not tonumber(pointerLifetime) or (ARGV[cursor + 2] ~= '0' and ARGV[cursor + 2] ~= '1') then
    return bad('direct-send trailer')
  end
  cursor = cursor + 3
end
if cursor - 1 ~= #ARGV then return bad('ARGV length does not match the counts') end

-- The tail of KEYS, split as ARGV[9..12] and the trailer describe it.
local nextKey = 5
local eventKey = false
if hasEvent then
  eventKey = KEYS[nextKey]
  nextKey = nextKey + 1
end
local joinKeys, moveKeys, leaveKeys, pointerKeys = {}, {}, {}, {}
for i = 1, joinCount do joinKeys[i] = KEYS[nextKey + i - 1] end
nextKey = nextKey + joinCount
for i = 1, moveCount do moveKeys[i] = KEYS[nextKey + i - 1] end
nextKey = nextKey + moveCount
for i = 1, leaveCount do leaveKeys[i] = KEYS[nextKey + i - 1] end
nextKey = nextKey + leaveCount
for i = 1, pointerCount do pointerKeys[i] = KEYS[nextKey + i - 1] end
nextKey = nextKey + pointerCount
local orderKey = false
if readOrder then
  orderKey = KEYS[nextKey]
  nextKey = nextKey + 1
end
if nextKey - 1 ~= #KEYS then return bad('KEYS tail does not match the counts') end

-- Validate everything before the first write: Valkey never rolls a script back.
local typed = { { stateKey, 'hash' }, { workKey, 'stream' }, { dueKey, 'zset' }, { activeKey, 'set' } }
if eventKey then typed[#typed + 1] = { eventKey, 'string' } end
for _, k in ipairs(joinKeys) do typed[#typed + 1] = { k, 'zset' } end
for _, k in ipairs(moveKeys) do typed[#typed + 1] = { k, 'zset' } end
for _, k in ipairs(leaveKeys) do typed[#typed + 1] = { k, 'zset' } end
-- The trailer's keys are not the state's: SET replaces a pointer of any type, and a job order
-- that is no hash reads as missing rather than failing the engine's write.
local badKey, badType, wantType = wrongType(typed)
if badKey then return { 'wrongtype', badKey, badType, wantType } end

-- A redelivered event is a no-op even after the state moved on, so this comes before the version.
if eventKey then
  local holder = redis.call('GET', eventKey)
  if holder then return { 'duplicate', holder } end
end

local versionOk, current = checkVersion(stateKey, expected)
if not versionOk then return { 'conflict', current } end

local storedScope = redis.call('HGET', stateKey, 'scope')
if storedScope and storedScope ~= scope then return { 'scope', storedScope } end

-- Apply.
local version = current + 1
redis.call('HSET', stateKey, 'v', tostring(version), 'scope', scope, 'op', op, 'doc', doc)
if eventKey then redis.call('SET', eventKey, jobId, 'PX', eventLifetime) end

local reply = { 'ok', version }
for _, items in ipairs(entries) do
  reply[#reply + 1] = redis.call('XADD', workKey, '*', unpack(items))
end

if due == '' then
  redis.call('ZREM', dueKey, jobId)
else
  redis.call('ZADD', dueKey, due, jobId)
end
if active then
  redis.call('SADD', activeKey, jobId)
else
  redis.call('SREM', activeKey, jobId)
end
for i, k in ipairs(joinKeys) do redis.call('ZADD', k, 'NX', joinSince[i], jobId) end
for i, k in ipairs(moveKeys) do redis.call('ZADD', k, moveSince[i], jobId) end
for _, k in ipairs(leaveKeys) do redis.call('ZREM', k, jobId) end

for _, k in ipairs(pointerKeys) do redis.call('SET', k, jobId, 'PX', pointerLifetime) end

if entryCount > 0 and channel ~= '' then redis.call('PUBLISH', channel, scope) end
if orderKey then
  reply[#reply + 1] = 'joborder'
  local orderType = redis.call('TYPE', orderKey)['ok']
  reply[#reply + 1] = orderType == 'hash' and redis.call('HGET', orderKey, 'doc') or false
end
return reply

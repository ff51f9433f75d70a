--[[
  Puts a job order document and maintains its indexes in one atomic step.

  KEYS[1] joborder:{id}              hash  v, scope, op, doc, priority (kept for index rebuilds)
  KEYS[2] joborder:list:{scope}      zset  member id, score priority
  KEYS[3] scopes                     set   every scope with a document
  KEYS[4] changes:{scope}            stream change entries, MAXLEN ~ 5000
  KEYS[5] joborder:search:{scope}    zset  the search index (lib/joborder-search.lua), score 0
  KEYS[6] jobresponse:oforder:{id}   zset  the order's responses; read only, when it is retired
  KEYS[7] jobresponse:failed:{scope} zset  a retired order's responses leave it (lib/joborder-unfail.lua)

  ARGV[1] expected version (0 create only, -1 unconditional, n > 0 must match)
  ARGV[2] scope
  ARGV[3] id
  ARGV[4] priority (number; the list score)
  ARGV[5] doc (JSON text; validated by the caller)
  ARGV[6] operation id
  ARGV[7] change word (Store, Start, ..., or put)
  ARGV[8] nudge channel ({prefix}:nudge:changes)
  ARGV[9] acceptance limit: when > 0 and the id is not yet listed, the put fails if the list
          already holds this many job orders (counted here, so concurrent stores cannot both pass)
  ARGV[10] retention ms: when > 0 the job order leaves the list, its responses leave the failed
          set, and the hash expires after it (Clear, Cancel); 0 keeps it listed and persistent
  ARGV[11] origin: who caused the write (JSON text), kept in the change entry; empty = none
  ARGV[12] search facts, optional (all three or none; without them the script decodes the doc
  ARGV[13] for them): the state text (State[1].StateText.Text, "_" and State[2]'s when there is
  ARGV[14] one), the work master id (JobOrder.WorkMasterID[1].ID) and the error (the Comment when
          the state is Aborted, at most 500 bytes, cut on a UTF-8 boundary); "" for what the
          doc lacks. Facts that cannot be right (an error over 500 bytes, or for another state)
          are an error reply, before any write.

  Replies:
    {"ok", newVersion}
    {"conflict", storedVersion}
    {"scope", storedScope}
    {"limit", listedCount, limit}
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua
-- @include lib/check-version.lua
-- @include lib/joborder-write.lua
-- @include lib/joborder-unfail.lua

local docKey, listKey, scopesKey, changesKey, searchKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local responsesKey, failedKey = KEYS[6], KEYS[7]
local expected = tonumber(ARGV[1])
local scope, id, priority, doc, op, change, channel = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8]
local limit, retainMs = tonumber(ARGV[9]), tonumber(ARGV[10])
local origin = ARGV[11] or ''

local facts, badFacts = searchTrailingFacts(ARGV, 11)
if badFacts then return redis.error_reply('put-joborder: malformed arguments: ' .. badFacts) end

local badKey, badType, wantType = wrongType({ { docKey, 'hash' }, { listKey, 'zset' }, { scopesKey, 'set' }, { changesKey, 'stream' }, { searchKey, 'zset' },
  { responsesKey, 'zset' }, { failedKey, 'zset' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local versionOk, current = checkVersion(docKey, expected)
if not versionOk then return { 'conflict', current } end

local storedScope = redis.call('HGET', docKey, 'scope')
if storedScope and storedScope ~= scope then return { 'scope', storedScope } end

if limit > 0 and retainMs == 0 and not redis.call('ZSCORE', listKey, id) then
  local listed = redis.call('ZCARD', listKey)
  if listed >= limit then return { 'limit', listed, limit } end
end

local version = current + 1
jobOrderWrite({
  docKey = docKey, listKey = listKey, scopesKey = scopesKey, changesKey = changesKey, searchKey = searchKey, scope = scope, id = id, priority = priority,
  doc = doc, op = op, change = change, origin = origin, channel = channel, retainMs = retainMs, facts = facts
}, version)
if retainMs > 0 then jobOrderUnfail(responsesKey, failedKey) end
return { 'ok', version }

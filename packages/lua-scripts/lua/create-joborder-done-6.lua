--[[
  Creates a job order (create only) and marks the CloudEvent that asked for it done, in one
  atomic step: the request's effect and its done mark land together or not at all. Written
  only while the caller still holds the request's dedupe claim. A refused create (the id is
  taken, the scope is full) writes nothing, not even the mark: the caller marks the request
  done with its refusal.

  KEYS[1] joborder:{id}              hash  v, scope, op, doc, priority
  KEYS[2] joborder:list:{scope}      zset  member id, score priority
  KEYS[3] scopes                     set   every scope with a document
  KEYS[4] changes:{scope}            stream change entries, MAXLEN ~ 5000
  KEYS[5] ce:dedupe:{hash}           string the request's claim: processing:{token}
  KEYS[6] joborder:search:{scope}    zset  the search index (lib/joborder-search.lua), score 0

  ARGV[1] scope
  ARGV[2] id
  ARGV[3] priority (number; the list score)
  ARGV[4] doc (JSON text; validated by the caller)
  ARGV[5] operation id
  ARGV[6] change word (Store, StoreAndStart)
  ARGV[7] nudge channel ({prefix}:nudge:changes)
  ARGV[8] acceptance limit: when > 0 the create fails if the list already holds this many
  ARGV[9] origin: who caused the write (JSON text), kept in the change entry; empty = none
  ARGV[10] claim token of the caller
  ARGV[11] done TTL in ms (positive integer; validated by the caller)
  ARGV[12] the reply to keep with the done mark (text); empty keeps none
  ARGV[13] search facts, optional (all three or none), as put-joborder-7's ARGV[12] to ARGV[14]:
  ARGV[14] the state text, the work master id and the error (the Aborted comment, at most 500
  ARGV[15] bytes); without them the script decodes the doc for them. Facts that cannot be right
          are an error reply, before any write.

  Replies:
    {"ok", 1}                          created at version 1, the request marked done
    {"lost", stored}                   the caller does not hold the claim; nothing written
    {"conflict", storedVersion}        the id is taken; nothing written
    {"scope", storedScope}
    {"limit", listedCount, limit}
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua
-- @include lib/check-version.lua
-- @include lib/dedupe-mark.lua
-- @include lib/joborder-write.lua

local docKey, listKey, scopesKey, changesKey, dedupeKey, searchKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local scope, id, priority, doc, op, change, channel = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local limit, origin = tonumber(ARGV[8]), ARGV[9]
local token, ttlMs, reply = ARGV[10], ARGV[11], ARGV[12]

local facts, badFacts = searchTrailingFacts(ARGV, 12)
if badFacts then return redis.error_reply('create-joborder-done: malformed arguments: ' .. badFacts) end

local badKey, badType, wantType = wrongType({
  { docKey, 'hash' }, { listKey, 'zset' }, { scopesKey, 'set' }, { changesKey, 'stream' }, { dedupeKey, 'string' }, { searchKey, 'zset' }
})
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local held, stored = dedupeHeld(dedupeKey, token)
if not held then return { 'lost', stored } end

local versionOk, current = checkVersion(docKey, 0)
if not versionOk then return { 'conflict', current } end

local storedScope = redis.call('HGET', docKey, 'scope')
if storedScope and storedScope ~= scope then return { 'scope', storedScope } end

if limit > 0 and not redis.call('ZSCORE', listKey, id) then
  local listed = redis.call('ZCARD', listKey)
  if listed >= limit then return { 'limit', listed, limit } end
end

jobOrderWrite({
  docKey = docKey, listKey = listKey, scopesKey = scopesKey, changesKey = changesKey, searchKey = searchKey, scope = scope, id = id, priority = priority,
  doc = doc, op = op, change = change, origin = origin, channel = channel, retainMs = 0, facts = facts
}, 1)
dedupeMarkDone(dedupeKey, ttlMs, reply)
return { 'ok', 1 }

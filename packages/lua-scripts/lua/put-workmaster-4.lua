--[[
  Puts a work master document and maintains its scope set in one atomic step.

  KEYS[1] workmaster:{id}              hash   v, scope, op, doc
  KEYS[2] workmaster:list:{scope}      set    ids
  KEYS[3] scopes                       set    every scope with a document
  KEYS[4] changes:{scope}              stream change entries, MAXLEN ~ 5000

  ARGV[1] expected version (0 create only, -1 unconditional, n > 0 must match)
  ARGV[2] scope
  ARGV[3] id
  ARGV[4] doc (JSON text; validated by the caller)
  ARGV[5] operation id
  ARGV[6] change word (put, ...)
  ARGV[7] nudge channel ({prefix}:nudge:changes)

  Replies:
    {"ok", newVersion}
    {"conflict", storedVersion}
    {"scope", storedScope}
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua
-- @include lib/check-version.lua
-- @include lib/append-change.lua

local docKey, listKey, scopesKey, changesKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local expected = tonumber(ARGV[1])
local scope, id, doc, op, change, channel = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]

local badKey, badType, wantType = wrongType({ { docKey, 'hash' }, { listKey, 'set' }, { scopesKey, 'set' }, { changesKey, 'stream' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local versionOk, current = checkVersion(docKey, expected)
if not versionOk then return { 'conflict', current } end

local storedScope = redis.call('HGET', docKey, 'scope')
if storedScope and storedScope ~= scope then return { 'scope', storedScope } end

local version = current + 1
redis.call('HSET', docKey, 'v', tostring(version), 'scope', scope, 'op', op, 'doc', doc)
redis.call('SADD', listKey, id)
redis.call('SADD', scopesKey, scope)
appendChange(changesKey, channel, scope, 'workmaster', id, change, version, op)
return { 'ok', version }

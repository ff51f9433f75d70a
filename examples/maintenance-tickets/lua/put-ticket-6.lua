--[[
  Stores a maintenance ticket and keeps its indexes: the scope's list by severity and the set of
  its status. The old by-status set follows from the status the caller read; the script re-checks it.

  KEYS[1] ticket:{id}                        hash    v, scope, status, severity, op, doc
  KEYS[2] ticket:list:{scope}                zset    id, score severity
  KEYS[3] ticket:bystatus:{scope}:{status}   set     ids (the new status)
  KEYS[4] ticket:bystatus:{scope}:{old}      set     ids (the status the caller read; the document key when none)
  KEYS[5] scopes                             set     gains the scope
  KEYS[6] changes:{scope}                    stream  gains one change entry (kind "ticket")

  ARGV[1] expected version (0 create, -1 any, n must match)
  ARGV[2] scope              ARGV[3] id                 ARGV[4] operation id
  ARGV[5] change word        ARGV[6] nudge channel      ARGV[7] doc (JSON text)
  ARGV[8] status             ARGV[9] status the caller read ("" = none)
  ARGV[10] severity

  Replies:
    {"ok", version}
    {"conflict", storedVersion}
    {"scope", storedScope}
    {"retry", storedStatus}
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua
-- @include lib/check-version.lua
-- @include lib/append-change.lua
-- @include ./lib/ticket-precondition.lua

local docKey, listKey, statusKey, oldStatusKey, scopesKey, changesKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
local expected = tonumber(ARGV[1])
local scope, id, op, change, channel, doc = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]
local status, readStatus, severity = ARGV[8], ARGV[9], ARGV[10]

-- Validate everything before the first write: a script is never rolled back.
local checks = { { docKey, 'hash' }, { listKey, 'zset' }, { statusKey, 'set' }, { scopesKey, 'set' }, { changesKey, 'stream' } }
if readStatus ~= '' then table.insert(checks, { oldStatusKey, 'set' }) end
local badKey, badType, wantType = wrongType(checks)
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local versionOk, current = checkVersion(docKey, expected)
if not versionOk then return { 'conflict', current } end
local storedScope = redis.call('HGET', docKey, 'scope')
if storedScope and storedScope ~= scope then return { 'scope', storedScope } end
local moved = checkTicketStatus(docKey, readStatus)
if moved then return moved end

local version = current + 1
redis.call('HSET', docKey, 'v', tostring(version), 'scope', scope, 'status', status, 'severity', severity, 'op', op, 'doc', doc)
redis.call('ZADD', listKey, severity, id)
if readStatus ~= '' and readStatus ~= status then redis.call('SREM', oldStatusKey, id) end
redis.call('SADD', statusKey, id)
redis.call('SADD', scopesKey, scope)
appendChange(changesKey, channel, scope, 'ticket', id, change, version, op)
return { 'ok', version }

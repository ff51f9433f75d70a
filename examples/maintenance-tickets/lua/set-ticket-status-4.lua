--[[
  Moves a maintenance ticket to another status without touching its document text: the hash's
  status field and its by-status sets, one new version and one change entry.

  KEYS[1] ticket:{id}                        hash    gains v, status, op
  KEYS[2] ticket:bystatus:{scope}:{old}      set     loses the id (the status the caller read)
  KEYS[3] ticket:bystatus:{scope}:{status}   set     gains the id
  KEYS[4] changes:{scope}                    stream  gains one change entry (kind "ticket")

  ARGV[1] expected version (-1 any)   ARGV[2] scope the caller read   ARGV[3] id
  ARGV[4] operation id                ARGV[5] change word             ARGV[6] nudge channel
  ARGV[7] status the caller read      ARGV[8] new status

  Replies:
    {"ok", version}
    {"notfound"}
    {"conflict", storedVersion}
    {"retry", stored}          the scope or status moved since the caller read them
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua
-- @include lib/check-delete.lua
-- @include lib/append-change.lua
-- @include ./lib/ticket-precondition.lua

local docKey, fromKey, toKey, changesKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local expected = tonumber(ARGV[1])
local scope, id, op, change, channel = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
local readStatus, status = ARGV[7], ARGV[8]

local badKey, badType, wantType = wrongType({ { docKey, 'hash' }, { fromKey, 'set' }, { toKey, 'set' }, { changesKey, 'stream' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

-- The delete precondition is this write's too: exists, version matches, scope as read.
local early, current = checkDelete(docKey, expected, scope)
if early then return early end
local moved = checkTicketStatus(docKey, readStatus)
if moved then return moved end

local version = current + 1
redis.call('HSET', docKey, 'v', tostring(version), 'status', status, 'op', op)
if readStatus ~= status then redis.call('SREM', fromKey, id) end
redis.call('SADD', toKey, id)
appendChange(changesKey, channel, scope, 'ticket', id, change, version, op)
return { 'ok', version }

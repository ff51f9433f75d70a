--[[
  Deletes a maintenance ticket with every index entry.

  KEYS[1] ticket:{id}                        hash
  KEYS[2] ticket:list:{scope}                zset    (scope as the caller read it)
  KEYS[3] ticket:bystatus:{scope}:{status}   set     (status as the caller read it; the document key when none)
  KEYS[4] scopes                             set     (only type-checked)
  KEYS[5] changes:{scope}                    stream  gains one change entry

  ARGV[1] expected version (-1 any)   ARGV[2] scope the caller read   ARGV[3] id
  ARGV[4] operation id                ARGV[5] change word             ARGV[6] nudge channel
  ARGV[7] status the caller read ("" = none)

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

local docKey, listKey, statusKey, scopesKey, changesKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local expected = tonumber(ARGV[1])
local scope, id, op, change, channel, readStatus = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7]

local checks = { { docKey, 'hash' }, { listKey, 'zset' }, { scopesKey, 'set' }, { changesKey, 'stream' } }
if readStatus ~= '' then table.insert(checks, { statusKey, 'set' }) end
local badKey, badType, wantType = wrongType(checks)
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local early, current = checkDelete(docKey, expected, scope)
if early then return early end
local moved = checkTicketStatus(docKey, readStatus)
if moved then return moved end

redis.call('DEL', docKey)
redis.call('ZREM', listKey, id)
if readStatus ~= '' then redis.call('SREM', statusKey, id) end
appendChange(changesKey, channel, scope, 'ticket', id, change, current, op)
return { 'ok', current }

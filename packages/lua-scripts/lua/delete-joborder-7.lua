--[[
  Deletes a job order document and every index entry of it.

  KEYS[1] joborder:{id}              hash
  KEYS[2] joborder:list:{scope}      zset (scope as stored; the caller read it)
  KEYS[3] scopes                     set (only type-checked: a scope stays registered)
  KEYS[4] changes:{scope}            stream
  KEYS[5] joborder:search:{scope}    zset  the search index: the job order's members leave it
  KEYS[6] jobresponse:oforder:{id}   zset  the order's responses; read only
  KEYS[7] jobresponse:failed:{scope} zset  the order's responses leave it (lib/joborder-unfail.lua)

  ARGV[1] expected version (-1 unconditional, n > 0 must match)
  ARGV[2] scope the caller read (the script checks it is still the stored one)
  ARGV[3] id
  ARGV[4] operation id
  ARGV[5] change word (delete, Clear, ...)
  ARGV[6] nudge channel

  Replies:
    {"ok", deletedVersion}
    {"notfound"}
    {"conflict", storedVersion}
    {"retry", storedScope}          the scope changed between the caller's read and now
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua
-- @include lib/check-delete.lua
-- @include lib/append-change.lua
-- @include lib/joborder-search.lua
-- @include lib/joborder-unfail.lua

local docKey, listKey, scopesKey, changesKey, searchKey = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local responsesKey, failedKey = KEYS[6], KEYS[7]
local expected = tonumber(ARGV[1])
local scope, id, op, change, channel = ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]

local badKey, badType, wantType = wrongType({ { docKey, 'hash' }, { listKey, 'zset' }, { scopesKey, 'set' }, { changesKey, 'stream' }, { searchKey, 'zset' },
  { responsesKey, 'zset' }, { failedKey, 'zset' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local early, current = checkDelete(docKey, expected, scope)
if early then return early end

redis.call('DEL', docKey)
redis.call('ZREM', listKey, id)
searchReplace(searchKey, searchEscape(id), nil)
jobOrderUnfail(responsesKey, failedKey)
appendChange(changesKey, channel, scope, 'joborder', id, change, current, op)
return { 'ok', current }

--[[
  Deletes one SFC job's execution state and every index entry of it (Clear). The work stream
  keeps its entries (they are history its consumers acknowledge), and applied-event keys expire
  by themselves.

  KEYS: 3 fixed keys, then a variable tail (the "+" in the file name):
  KEYS[1] sfc:state:{jobId}               hash
  KEYS[2] sfc:due:{scope}                 zset (scope as stored; the caller read it)
  KEYS[3] sfc:active:{scope}              set
  tail:
    sfc:waits:{scope}:{typeId} ...        zset  every waits set the caller names (ZREM)
    then per keyed wait the caller names (ARGV[4] of them), two keys:
      sfc:keyed:{scope}:{typeId}:{place}:{value}   zset   the keyed wait (lib/sfc-keyed-waits.lua)
      sfc:keyplaces:{scope}:{typeId}               hash   its type's places

  ARGV[1] expected version (-1 unconditional, n > 0 must match)
  ARGV[2] scope the caller read (the script checks it is still the stored one)
  ARGV[3] job id
  ARGV[4] number of keyed waits K, then K places, one per keyed wait, in tail order

  Replies:
    {"ok", deletedVersion}
    {"notfound"}
    {"conflict", storedVersion}
    {"retry", storedScope}          the scope changed between the caller's read and now
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua
-- @include lib/check-delete.lua
-- @include lib/sfc-keyed-waits.lua

local stateKey, dueKey, activeKey = KEYS[1], KEYS[2], KEYS[3]
local expected = tonumber(ARGV[1])
local scope, jobId = ARGV[2], ARGV[3]
local keyedCount = tonumber(ARGV[4])
local keyed = keyedCount and sfcReadKeyedLeaves(5, keyedCount)
if not keyed or #ARGV ~= 4 + keyedCount then return redis.error_reply('sfc-delete: malformed arguments: keyed waits') end
-- The tail: the waits sets up to KEYS[lastWaits], then the keyed waits' pairs.
local lastWaits = #KEYS - 2 * keyedCount
if lastWaits < 3 then return redis.error_reply('sfc-delete: malformed arguments: KEYS tail') end
sfcTakeKeyedKeys(keyed, lastWaits + 1)

local typed = { { stateKey, 'hash' }, { dueKey, 'zset' }, { activeKey, 'set' } }
for i = 4, lastWaits do typed[#typed + 1] = { KEYS[i], 'zset' } end
sfcKeyedTypes(keyed, typed)
local badKey, badType, wantType = wrongType(typed)
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local early, current = checkDelete(stateKey, expected, scope)
if early then return early end

redis.call('DEL', stateKey)
redis.call('ZREM', dueKey, jobId)
redis.call('SREM', activeKey, jobId)
for i = 4, lastWaits do redis.call('ZREM', KEYS[i], jobId) end
for _, wait in ipairs(keyed) do sfcKeyedLeave(wait, jobId) end
return { 'ok', current }

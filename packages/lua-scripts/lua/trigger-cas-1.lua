--[[
  Writes or deletes one trigger row if it still is what the caller read,
  and nudges every instance that holds the triggers in memory. The caller validated the row and
  set its version; comparing the whole stored text keeps JSON out of the script.

  KEYS[1] dag:triggers        hash   trigger id -> row (JSON text)

  ARGV[1] trigger id
  ARGV[2] expected stored row ("" = the trigger must not exist)
  ARGV[3] new row ("" = delete the trigger)
  ARGV[4] nudge channel ({prefix}:nudge:triggers)
  ARGV[5] nudge message (the edit as the caller describes it: trigger, scope, change, edit id)

  Replies:
    {"ok"}
    {"conflict", stored}      nothing written (stored: the current row, or false when absent)
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local key, id, expected, row = KEYS[1], ARGV[1], ARGV[2], ARGV[3]

local badKey, badType, wantType = wrongType({ { key, 'hash' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local stored = redis.call('HGET', key, id)
if (stored or '') ~= expected then return { 'conflict', stored } end

if row == '' then
  redis.call('HDEL', key, id)
else
  redis.call('HSET', key, id, row)
end
redis.call('PUBLISH', ARGV[4], ARGV[5])
return { 'ok' }

--[[
  Moves one pending entry of a consumer group to its dead-letter stream and acknowledges it, in
  one atomic step: the entry is never acknowledged without being copied, nor copied twice.

  KEYS[1] the source stream (changes:{scope}, sfc:work:{scope}, ...)   stream
  KEYS[2] dlq:{kind}:{scope}                                          stream, never capped

  ARGV[1] group
  ARGV[2] entry id
  ARGV[3] consumer that must still own the entry (the one whose handler failed)
  ARGV[4] error text of the last failure

  The dead-letter entry holds, in this order, seven metadata fields and then the entry's own
  fields exactly as they were (a reader splits after the seventh pair, so an entry field with a
  metadata name cannot be confused with it):
    dlq.stream, dlq.group, dlq.id, dlq.deliveries (from XPENDING, not from the caller),
    dlq.consumer, dlq.error, dlq.ts (server time, epoch ms)
  When the entry itself was already deleted from the stream, only the metadata is written.

  Replies:
    {"ok", deadLetterId}
    {"notpending"}                  not pending in the group: acknowledged, or stream or group gone
    {"notowner", owner}             another consumer claimed it meanwhile; it is theirs to finish
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local streamKey, deadKey = KEYS[1], KEYS[2]
local group, id, consumer, failure = ARGV[1], ARGV[2], ARGV[3], ARGV[4]

local badKey, badType, wantType = wrongType({ { streamKey, 'stream' }, { deadKey, 'stream' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end
if redis.call('EXISTS', streamKey) == 0 then return { 'notpending' } end

-- A missing group is an error reply (NOGROUP); pcall turns it into "not pending".
local pending = redis.pcall('XPENDING', streamKey, group, id, id, 1)
if pending['err'] or #pending == 0 then return { 'notpending' } end
local owner, deliveries = pending[1][2], pending[1][4]
if owner ~= consumer then return { 'notowner', owner } end

local now = redis.call('TIME')
local ts = tostring(tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000))
local fields = {
  'dlq.stream', streamKey, 'dlq.group', group, 'dlq.id', id, 'dlq.deliveries', tostring(deliveries),
  'dlq.consumer', consumer, 'dlq.error', failure, 'dlq.ts', ts
}
local found = redis.call('XRANGE', streamKey, id, id)
if #found == 1 then
  for _, value in ipairs(found[1][2]) do fields[#fields + 1] = value end
end

local deadId = redis.call('XADD', deadKey, '*', unpack(fields))
redis.call('XACK', streamKey, group, id)
return { 'ok', deadId }

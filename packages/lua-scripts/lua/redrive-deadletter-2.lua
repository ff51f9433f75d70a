--[[
  Moves one dead letter back to the stream it came from, as a new entry at the stream's end, and
  deletes it from the dead-letter stream, in one atomic step: a redriven entry is never lost
  between the two streams nor delivered twice by a repeated redrive.

  KEYS[1] dlq:{kind}:{scope}            stream
  KEYS[2] the source stream              stream; must be the entry's dlq.stream (the caller read it)

  ARGV[1] dead-letter entry id

  Replies:
    {"ok", newId}                       re-added to KEYS[2] with the entry's own fields, removed from KEYS[1]
    {"notfound"}                        no such dead letter (already redriven or forgotten)
    {"otherstream", stream}             the entry came from another stream than KEYS[2]
    {"nofields"}                        the entry carries only metadata (its original was deleted
                                        before it was dead-lettered): nothing to redrive, left in place
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local deadKey, streamKey = KEYS[1], KEYS[2]
local id = ARGV[1]

local badKey, badType, wantType = wrongType({ { deadKey, 'stream' }, { streamKey, 'stream' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local found = redis.call('XRANGE', deadKey, id, id)
if #found == 0 then return { 'notfound' } end
local flat = found[1][2]

-- Seven metadata pairs come first (see dead-letter-2.lua); the entry's own fields follow.
local metaLength = 14
if flat[1] ~= 'dlq.stream' or #flat < metaLength then return { 'nofields' } end
if flat[2] ~= streamKey then return { 'otherstream', flat[2] } end
if #flat == metaLength then return { 'nofields' } end

local fields = {}
for i = metaLength + 1, #flat do fields[#fields + 1] = flat[i] end
local newId = redis.call('XADD', streamKey, '*', unpack(fields))
redis.call('XDEL', deadKey, id)
return { 'ok', newId }

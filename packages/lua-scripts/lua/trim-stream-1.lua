--[[
  Trims a stream below the oldest entry that some consumer group has not acknowledged.

  KEYS[1] the stream                                                  stream

  No ARGV.

  Per group the first entry it still needs is its oldest pending id when it has pending entries,
  else the entry after its last-delivered id (the last-delivered entry itself is kept: XTRIM MINID
  removes only ids below the threshold, and keeping one acknowledged entry is harmless). The
  threshold is the minimum over all groups. Reading the groups and trimming in one script means
  no group can read, claim or acknowledge in between.

  A stream without groups is not trimmed: nobody has acknowledged anything, and a group created
  later from id 0 must still find the entries.

  Replies:
    {"ok", removedCount, thresholdId}
    {"nogroups"}
    {"notfound"}                    the stream does not exist
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua
-- @include lib/stream-id.lua

local streamKey = KEYS[1]

local badKey, badType, wantType = wrongType({ { streamKey, 'stream' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end
if redis.call('EXISTS', streamKey) == 0 then return { 'notfound' } end

local groups = redis.call('XINFO', 'GROUPS', streamKey)
if #groups == 0 then return { 'nogroups' } end

local threshold = false
for _, flat in ipairs(groups) do
  local info = {}
  for i = 1, #flat, 2 do info[flat[i]] = flat[i + 1] end
  local needed = info['last-delivered-id']
  if info['pending'] > 0 then
    -- XPENDING summary: count, smallest pending id, largest, consumers.
    needed = redis.call('XPENDING', streamKey, info['name'])[2]
  end
  if threshold == false or compareStreamId(needed, threshold) < 0 then threshold = needed end
end

local removed = redis.call('XTRIM', streamKey, 'MINID', threshold)
return { 'ok', removed, threshold }

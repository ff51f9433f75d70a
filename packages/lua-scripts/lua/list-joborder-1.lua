--[[
  One page of a scope's job orders: highest priority first, ties by id ascending (read only).
  ZREVRANGE alone would put ties in descending id order, and the order must not depend on the
  page size, so the page is read one priority group at a time: a group keeps its place from the
  descending walk, and its ids come in ascending order from a ZRANGEBYSCORE on its score.

  KEYS[1] joborder:list:{scope}      zset  member id, score priority

  ARGV[1] offset (0-based position in the list)
  ARGV[2] count (at most this many entries; the caller asks one more to learn whether a next page exists)

  Replies:
    {"ok", id1, priority1, id2, priority2, ...}
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local listKey = KEYS[1]
local offset, count = tonumber(ARGV[1]), tonumber(ARGV[2])

local badKey, badType, wantType = wrongType({ { listKey, 'zset' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local reply = { 'ok' }
local position, remaining = offset, count
while remaining > 0 do
  local head = redis.call('ZREVRANGE', listKey, position, position, 'WITHSCORES')
  if #head == 0 then break end
  -- The score text as the server prints it names the group exactly.
  local score = head[2]
  local above = redis.call('ZCOUNT', listKey, '(' .. score, '+inf')
  local group = redis.call('ZRANGEBYSCORE', listKey, score, score, 'WITHSCORES', 'LIMIT', position - above, remaining)
  if #group == 0 then break end
  for i = 1, #group do reply[#reply + 1] = group[i] end
  position = position + #group / 2
  remaining = remaining - #group / 2
end
return reply

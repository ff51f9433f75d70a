-- Keyed waits of SFC jobs, shared by sfc-cas-4+, sfc-cas-many-0+ and sfc-delete-3+. A pull event
-- whose action names a correlation key waits by value, not by type:
--   sfc:keyed:{scope}:{typeId}:{place}:{value}   zset   job id, score = wait start: the jobs that
--                                                        expect `value` at `place` (longest first)
--   sfc:keyplaces:{scope}:{typeId}               hash   place -> how many keyed waits of the type
--                                                        read it: the places an event is looked up by
-- A wait is a table { key = the zset, places = the hash, place = its field, since = wait start,
-- move = true when its start replaces the one stored }. The count moves only when the job's
-- membership does (ZADD added it, ZREM removed it), so writing a wait again (a reindex, a move)
-- never counts it twice, and a place with no keyed wait left is no field of the hash.

-- `count` keyed joins from ARGV[cursor], per join its place, its wait start and "1" when the start
-- replaces the stored one ("0": the first start is kept); the list and the next cursor, or nil.
local function sfcReadKeyedJoins(cursor, count)
  local joins = {}
  for i = 1, count do
    local place, since, move = ARGV[cursor], ARGV[cursor + 1], ARGV[cursor + 2]
    if not place or place == '' or not tonumber(since) or (move ~= '0' and move ~= '1') then return nil end
    joins[i] = { place = place, since = since, move = move == '1' }
    cursor = cursor + 3
  end
  return joins, cursor
end

-- `count` keyed leaves from ARGV[cursor], per leave its place; the list and the next cursor, or nil.
local function sfcReadKeyedLeaves(cursor, count)
  local leaves = {}
  for i = 1, count do
    local place = ARGV[cursor]
    if not place or place == '' then return nil end
    leaves[i] = { place = place }
    cursor = cursor + 1
  end
  return leaves, cursor
end

-- The keys of `waits` from KEYS[nextKey], two per wait (its zset, then its type's places hash);
-- the next key index.
local function sfcTakeKeyedKeys(waits, nextKey)
  for _, wait in ipairs(waits) do
    wait.key, wait.places = KEYS[nextKey], KEYS[nextKey + 1]
    nextKey = nextKey + 2
  end
  return nextKey
end

-- Adds each wait's keys with its type to `typed` (the list check-types.lua's wrongType reads).
local function sfcKeyedTypes(waits, typed)
  for _, wait in ipairs(waits) do
    typed[#typed + 1] = { wait.key, 'zset' }
    typed[#typed + 1] = { wait.places, 'hash' }
  end
end

-- The job joins the keyed wait (its first start kept, or replaced for a move); a new member counts
-- at its place.
local function sfcKeyedJoin(wait, jobId)
  local added
  if wait.move then added = redis.call('ZADD', wait.key, wait.since, jobId) else added = redis.call('ZADD', wait.key, 'NX', wait.since, jobId) end
  if added == 1 then redis.call('HINCRBY', wait.places, wait.place, 1) end
end

-- The job leaves the keyed wait; a member removed uncounts at its place, which goes at zero.
local function sfcKeyedLeave(wait, jobId)
  if redis.call('ZREM', wait.key, jobId) == 1 and redis.call('HINCRBY', wait.places, wait.place, -1) <= 0 then
    redis.call('HDEL', wait.places, wait.place)
  end
end

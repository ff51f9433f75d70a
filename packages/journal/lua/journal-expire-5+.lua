--[[
  Removes a batch of entries past retention with every index entry that references them, in one
  atomic step. The caller read the batch (entry ids from the refdate zset, the
  index keys from each reverse set) and passes every key; the script re-checks what it read, so
  several daemons may sweep at once: an entry already removed is skipped, a reverse set that
  differs from what was read makes it reply "retry" before anything is written.

  KEYS[1] journal:payload:{scope}:{journal}   hash  entry id -> encoded entry
  KEYS[2] journal:refdate:{scope}:{journal}   zset  entry id, score reference time
  KEYS[3] journal:count:{scope}               hash  journal -> entries
  KEYS[4] journal:bytes:{scope}               hash  journal -> bytes
  KEYS[5] journal:lru:{scope}:{journal}       zset  index key -> last recall time
  KEYS[6..] per entry: its reverse set journal:entry:...:{id} (set), then per index key of it:
            the index key (zset) and its latest zset journal:latest:...:{searchKey} (zset)

  ARGV[1] journal name
  ARGV[2] cutoff: entries with a reference time at or below it are past retention (epoch ms)
  ARGV[3] E: number of entries
  ARGV[4..] per entry: id, n (its index keys), then n values (the latest zsets' members)

  Replies:
    {"ok", removed, bytes}
    {"retry", id}       a reverse set is not what was read; nothing written
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local journal, cutoff, e = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local checks = { { KEYS[1], 'hash' }, { KEYS[2], 'zset' }, { KEYS[3], 'hash' }, { KEYS[4], 'hash' }, { KEYS[5], 'zset' } }
local entries = {}
local k, a = 6, 4
for _ = 1, e do
  local entry = { id = ARGV[a], set = KEYS[k], indexes = {} }
  local n = tonumber(ARGV[a + 1])
  checks[#checks + 1] = { KEYS[k], 'set' }
  for i = 1, n do
    local index, latest = KEYS[k + 2 * i - 1], KEYS[k + 2 * i]
    entry.indexes[i] = { key = index, latest = latest, value = ARGV[a + 1 + i] }
    checks[#checks + 1] = { index, 'zset' }
    checks[#checks + 1] = { latest, 'zset' }
  end
  entries[#entries + 1] = entry
  k = k + 1 + 2 * n
  a = a + 2 + n
end
local badKey, badType, wantType = wrongType(checks)
if badKey then return { 'wrongtype', badKey, badType, wantType } end

-- Re-check before the first write: still past retention, and the reverse set is what was read.
local live = {}
for _, entry in ipairs(entries) do
  local score = redis.call('ZSCORE', KEYS[2], entry.id)
  if score and tonumber(score) <= cutoff then
    if redis.call('SCARD', entry.set) ~= #entry.indexes then return { 'retry', entry.id } end
    for _, index in ipairs(entry.indexes) do
      if redis.call('SISMEMBER', entry.set, index.key) == 0 then return { 'retry', entry.id } end
    end
    live[#live + 1] = entry
  end
end

local removed, bytes = 0, 0
for _, entry in ipairs(live) do
  local size = redis.call('HSTRLEN', KEYS[1], entry.id)
  if redis.call('HDEL', KEYS[1], entry.id) == 1 then
    removed = removed + 1
    bytes = bytes + size
  end
  redis.call('ZREM', KEYS[2], entry.id)
  for _, index in ipairs(entry.indexes) do
    redis.call('ZREM', index.key, entry.id)
    if redis.call('EXISTS', index.key) == 0 then
      -- The value has no entry left: it leaves the latest zset and the LRU (nothing to warm).
      redis.call('ZREM', index.latest, index.value)
      redis.call('ZREM', KEYS[5], index.key)
    end
  end
  redis.call('DEL', entry.set)
end
if removed > 0 then
  if redis.call('HINCRBY', KEYS[3], journal, -removed) <= 0 then redis.call('HDEL', KEYS[3], journal) end
  if redis.call('HINCRBY', KEYS[4], journal, -bytes) <= 0 then redis.call('HDEL', KEYS[4], journal) end
end
return { 'ok', removed, bytes }

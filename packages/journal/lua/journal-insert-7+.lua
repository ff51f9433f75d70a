--[[
  Inserts one journal entry with everything derived from it, in one atomic step:
  the payload, every search-key index, the reverse set, the latest zsets, the entry count and
  bytes, and every counter's total, bucket and bucket expiry. Idempotent: an entry id (the dedupe
  hash of the event's source and id) already stored writes nothing. New field names get the next
  integer of the journal's field table here, so two writers never assign one integer twice.

  KEYS[1] journal:payload:{scope}:{journal}   hash   entry id -> encoded entry
  KEYS[2] journal:entry:{scope}:{journal}:{id} set    index keys that reference the entry
  KEYS[3] journal:refdate:{scope}:{journal}   zset   entry id, score reference time
  KEYS[4] journal:fields:{scope}:{journal}    hash   field name -> integer
  KEYS[5] journal:count:{scope}               hash   journal -> entries
  KEYS[6] journal:bytes:{scope}               hash   journal -> bytes
  KEYS[7] counter:expiry:{scope}              zset   bucket member, score = when it leaves the window
  KEYS[8..] per search key: journal:index:...:{searchKey}:{value} (zset), journal:latest:...:{searchKey} (zset);
            then per counter: counter:{scope}:{journal}:{counter} (hash), counter:bucket:...:{value} (hash)

  ARGV[1] entry id
  ARGV[2] reference time (epoch ms, integer)
  ARGV[3] encoded entry (bytes)
  ARGV[4] journal name (the field of the count and bytes hashes)
  ARGV[5] F: number of new field names
  ARGV[6] S: number of search keys with a value
  ARGV[7] C: number of counters that count this entry
  ARGV[8..] F field names; then S values (the latest zsets' members);
            then per counter 5 entries: value, bucket start, amount, expiry score, expiry member

  Replies:
    {"ok", name1, index1, ...}   the integer of every new field name (assigned now or earlier)
    {"duplicate"}                the entry is stored already; nothing written
    {"invalid", what}            a number argument is not one; nothing written
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local id, ref, payload, journal = ARGV[1], tonumber(ARGV[2]), ARGV[3], ARGV[4]
local f, s, c = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7])
if not ref or not f or not s or not c then return { 'invalid', 'counts' } end
if #KEYS ~= 7 + 2 * s + 2 * c or #ARGV ~= 7 + f + s + 5 * c then return { 'invalid', 'arity' } end

local checks = { { KEYS[1], 'hash' }, { KEYS[2], 'set' }, { KEYS[3], 'zset' }, { KEYS[4], 'hash' },
                 { KEYS[5], 'hash' }, { KEYS[6], 'hash' }, { KEYS[7], 'zset' } }
for i = 1, s do
  checks[#checks + 1] = { KEYS[7 + 2 * i - 1], 'zset' }
  checks[#checks + 1] = { KEYS[7 + 2 * i], 'zset' }
end
local counterBase = 7 + 2 * s
for j = 1, c do
  checks[#checks + 1] = { KEYS[counterBase + 2 * j - 1], 'hash' }
  checks[#checks + 1] = { KEYS[counterBase + 2 * j], 'hash' }
end
local badKey, badType, wantType = wrongType(checks)
if badKey then return { 'wrongtype', badKey, badType, wantType } end

if redis.call('HEXISTS', KEYS[1], id) == 1 then return { 'duplicate' } end

local argCounter = 7 + f + s
for j = 1, c do
  local at = argCounter + 5 * (j - 1)
  if not tonumber(ARGV[at + 2]) or not tonumber(ARGV[at + 3]) or not tonumber(ARGV[at + 4]) then return { 'invalid', 'counter ' .. j } end
end

-- Validated: from here on every call succeeds.
local reply = { 'ok' }
for k = 1, f do
  local name = ARGV[7 + k]
  local index = redis.call('HGET', KEYS[4], name)
  if not index then
    -- Never deleted, so the hash length is the last integer handed out.
    index = redis.call('HLEN', KEYS[4]) + 1
    redis.call('HSET', KEYS[4], name, index)
  end
  reply[#reply + 1] = name
  reply[#reply + 1] = tonumber(index)
end

redis.call('HSET', KEYS[1], id, payload)
redis.call('ZADD', KEYS[3], ref, id)
local indexKeys = {}
for i = 1, s do
  local indexKey, latestKey, value = KEYS[7 + 2 * i - 1], KEYS[7 + 2 * i], ARGV[7 + f + i]
  redis.call('ZADD', indexKey, ref, id)
  redis.call('ZADD', latestKey, 'GT', ref, value)
  indexKeys[i] = indexKey
end
if s > 0 then redis.call('SADD', KEYS[2], unpack(indexKeys)) end
redis.call('HINCRBY', KEYS[5], journal, 1)
redis.call('HINCRBY', KEYS[6], journal, #payload)
for j = 1, c do
  local at = argCounter + 5 * (j - 1)
  local value, bucket, amount, expiresAt, member = ARGV[at + 1], ARGV[at + 2], ARGV[at + 3], ARGV[at + 4], ARGV[at + 5]
  redis.call('HINCRBYFLOAT', KEYS[counterBase + 2 * j - 1], value, amount)
  redis.call('HINCRBYFLOAT', KEYS[counterBase + 2 * j], bucket, amount)
  redis.call('ZADD', KEYS[7], expiresAt, member)
end
return reply

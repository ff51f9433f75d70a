--[[
  The newest entries of one search-key value, newest first, and the recall stamped in the
  journal's LRU zset (what the local cache warms first). With payloads, the encoded entries come
  along (one round trip); without, only ids and times (the caller's cache holds the rest).

  KEYS[1] journal:index:{scope}:{journal}:{searchKey}:{value}   zset  entry id, score reference time
  KEYS[2] journal:payload:{scope}:{journal}                      hash  entry id -> encoded entry
  KEYS[3] journal:lru:{scope}:{journal}                          zset  index key -> last recall time

  ARGV[1] since: the oldest reference time to return (epoch ms), or "-inf"
  ARGV[2] limit (positive integer)
  ARGV[3] now (epoch ms): the LRU stamp
  ARGV[4] "1" to return the payloads, "0" not to

  Replies:
    {"ok", id1, time1, payload1, id2, ...}   payload false when not asked for or gone
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local badKey, badType, wantType = wrongType({ { KEYS[1], 'zset' }, { KEYS[2], 'hash' }, { KEYS[3], 'zset' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local found = redis.call('ZREVRANGEBYSCORE', KEYS[1], '+inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
local reply = { 'ok' }
if #found == 0 then return reply end
redis.call('ZADD', KEYS[3], tonumber(ARGV[3]), KEYS[1])
local ids = {}
for i = 1, #found, 2 do ids[#ids + 1] = found[i] end
local payloads = {}
if ARGV[4] == '1' then payloads = redis.call('HMGET', KEYS[2], unpack(ids)) end
for i = 1, #ids do
  reply[#reply + 1] = ids[i]
  reply[#reply + 1] = found[2 * i]
  reply[#reply + 1] = payloads[i] or false
end
return reply

--[[
  Index rebuild: removes one member from a list or by-state index, but only if the document it
  names still does not belong there. The caller judged the member stale from a read; this
  re-judges it atomically, so a put that landed in between is never undone.

  KEYS[1] the index: joborder:list:{scope} (zset), jobresponse:list:{scope} (zset),
          jobresponse:bystate:{scope}:{state} (set) or workmaster:list:{scope} (set)
  KEYS[2] the document key of the member (joborder:{id}, jobresponse:{id}, workmaster:{id}); read only

  ARGV[1] member id
  ARGV[2] the index type: set or zset
  ARGV[3] "1" when only a persistent document belongs (a retired job order has a TTL), else "0"
  ARGV[4..n] field, value pairs a document must hold to belong (scope, and state for by-state
          sets); a document that is missing or not a hash never belongs

  Replies:
    {"removed", count}             count = 1 when the member was removed, 0 when already gone
    {"kept"}                       the document belongs there (now); nothing written
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local indexKey, docKey = KEYS[1], KEYS[2]
local id, indexType, persistentOnly = ARGV[1], ARGV[2], ARGV[3]

local badKey, badType, wantType = wrongType({ { indexKey, indexType } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local belongs = redis.call('TYPE', docKey)['ok'] == 'hash'
if belongs and persistentOnly == '1' then belongs = redis.call('PTTL', docKey) == -1 end
local i = 4
while belongs and i < #ARGV do
  belongs = redis.call('HGET', docKey, ARGV[i]) == ARGV[i + 1]
  i = i + 2
end
if belongs then return { 'kept' } end

if indexType == 'zset' then return { 'removed', redis.call('ZREM', indexKey, id) } end
return { 'removed', redis.call('SREM', indexKey, id) }

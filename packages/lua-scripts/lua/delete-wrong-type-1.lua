--[[
  Index rebuild: deletes an index key that holds the wrong Valkey type (a corrupted index that
  every write touching it refuses), so the rebuild can recreate it from the documents. A key of
  the right type is never deleted: an index is never emptied as a whole.

  KEYS[1] the index key

  ARGV[1] the type it must hold (set, zset, string)

  Replies:
    {"deleted", actualType}        the key held actualType and is gone
    {"kept", actualType}           the key holds the right type or does not exist; nothing written
]]

local actual = redis.call('TYPE', KEYS[1])['ok']
if actual == 'none' or actual == ARGV[1] then return { 'kept', actual } end
redis.call('DEL', KEYS[1])
return { 'deleted', actual }

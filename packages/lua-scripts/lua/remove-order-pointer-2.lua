--[[
  Index rebuild: deletes a by-order pointer that names a response which does not carry that job
  order (missing, moved to another order, or not a hash), if it still names what the caller read.

  KEYS[1] jobresponse:byorder:{orderId}    string  response id
  KEYS[2] jobresponse:{pointerId}          hash    read only: the response the pointer named when
                                                   the caller read it

  ARGV[1] job order id (of KEYS[1])
  ARGV[2] the id the pointer named when the caller read it

  Replies:
    {"removed", count}             count = 1 when deleted, 0 when the pointer was already gone
    {"kept"}                       the named response carries the order (now); nothing written
    {"retry", currentId}           the pointer names another id now; read again
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local pointerKey, docKey = KEYS[1], KEYS[2]
local orderId, pointerId = ARGV[1], ARGV[2]

local badKey, badType, wantType = wrongType({ { pointerKey, 'string' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local current = redis.call('GET', pointerKey)
if not current then return { 'removed', 0 } end
if current ~= pointerId then return { 'retry', current } end
if redis.call('TYPE', docKey)['ok'] == 'hash' and redis.call('HGET', docKey, 'order') == orderId then
  return { 'kept' }
end
redis.call('DEL', pointerKey)
return { 'removed', 1 }

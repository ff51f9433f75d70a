-- By-order bookkeeping shared by the job response scripts. jobresponse:oforder:{o} holds every
-- response that carries order o, scored by its last write, so when the response the pointer
-- names lets go of o (deleted, or moved to another order) the pointer moves to the newest
-- response that still carries o instead of vanishing while that one exists.
local function orderClock()
  local now = redis.call('TIME')
  return tonumber(now[1]) * 1000000 + tonumber(now[2])
end

local function releaseOrder(pointerKey, responsesKey, id)
  redis.call('ZREM', responsesKey, id)
  if redis.call('GET', pointerKey) ~= id then return end
  local newest = redis.call('ZREVRANGE', responsesKey, 0, 0)[1]
  if newest then redis.call('SET', pointerKey, newest) else redis.call('DEL', pointerKey) end
end

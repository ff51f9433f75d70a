-- The write of a checked job response put, on the side of its new values, shared by
-- put-jobresponse-12 (which first lets go of the old state and order) and the responses created
-- with an SFC job (lib/jobresponse-create.lua). `r` is a table:
--   docKey, listKey, stateKey, orderKey, ofOrderKey, scopesKey, changesKey, failedKey, ordersKey
--     jobresponse:{id}, jobresponse:list:{scope}, jobresponse:bystate:{scope}:{state} (unused when
--     state is ""), jobresponse:byorder:{orderId}, jobresponse:oforder:{orderId}, scopes, changes:{scope},
--     jobresponse:failed:{scope}, joborder:list:{scope} (read only)
--   scope, id, state, orderId, startTime, endTime, doc, op, change, channel   as put-jobresponse-12's ARGV
-- A response in a failure state (Aborted) whose job order is live (listed in the scope) is in the
-- scope's failed set, scored by its end time, so the console lists the newest failures a page at a
-- time; any other state, or a retired or deleted job order (lib/joborder-unfail.lua), leaves it.
-- @include lib/append-change.lua
-- @include lib/release-order.lua

local function jobResponseWrite(r, version)
  redis.call('HSET', r.docKey, 'v', tostring(version), 'scope', r.scope, 'state', r.state, 'order', r.orderId, 'start', r.startTime,
    'end', r.endTime, 'op', r.op, 'doc', r.doc)
  redis.call('ZADD', r.listKey, r.startTime, r.id)
  if r.state ~= '' then redis.call('SADD', r.stateKey, r.id) end
  redis.call('ZADD', r.ofOrderKey, orderClock(), r.id)
  redis.call('SET', r.orderKey, r.id)
  local live = r.state == 'Aborted' and r.orderId ~= '' and redis.call('ZSCORE', r.ordersKey, r.orderId)
  if live then redis.call('ZADD', r.failedKey, r.endTime, r.id) else redis.call('ZREM', r.failedKey, r.id) end
  redis.call('SADD', r.scopesKey, r.scope)
  appendChange(r.changesKey, r.channel, r.scope, 'jobresponse', r.id, r.change, version, r.op)
end

-- The write of a checked job response put, on the side of its new values, shared by
-- put-jobresponse-10 (which first lets go of the old state and order) and the responses created
-- with an SFC job (lib/jobresponse-create.lua). `r` is a table:
--   docKey, listKey, stateKey, orderKey, ofOrderKey, scopesKey, changesKey
--     jobresponse:{id}, jobresponse:list:{scope}, jobresponse:bystate:{scope}:{state} (unused when
--     state is ""), jobresponse:byorder:{orderId}, jobresponse:oforder:{orderId}, scopes, changes:{scope}
--   scope, id, state, orderId, startTime, doc, op, change, channel   as put-jobresponse-10's ARGV
-- @include lib/append-change.lua
-- @include lib/release-order.lua

local function jobResponseWrite(r, version)
  redis.call('HSET', r.docKey, 'v', tostring(version), 'scope', r.scope, 'state', r.state, 'order', r.orderId, 'start', r.startTime,
    'op', r.op, 'doc', r.doc)
  redis.call('ZADD', r.listKey, r.startTime, r.id)
  if r.state ~= '' then redis.call('SADD', r.stateKey, r.id) end
  redis.call('ZADD', r.ofOrderKey, orderClock(), r.id)
  redis.call('SET', r.orderKey, r.id)
  redis.call('SADD', r.scopesKey, r.scope)
  appendChange(r.changesKey, r.channel, r.scope, 'jobresponse', r.id, r.change, version, r.op)
end

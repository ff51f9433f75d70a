-- A job response created with an SFC write (sfc-cas-many-0+): the create-only put of
-- put-jobresponse-12 (no stored state or order to let go of). A response is a table:
--   docKey, listKey, stateKey, orderKey, ofOrderKey, scopesKey, changesKey, failedKey, ordersKey
--     jobresponse:{id}, jobresponse:list:{scope}, jobresponse:bystate:{scope}:{state} (the doc key
--     when state is ""), jobresponse:byorder:{orderId}, jobresponse:oforder:{orderId}, scopes, changes:{scope},
--     jobresponse:failed:{scope}, joborder:list:{scope}
--   scope, id, state, orderId, startTime, doc, op, change, channel   as put-jobresponse-12's ARGV
-- It never refuses the SFC write: a response that exists (a redelivery stored it) or a key of
-- another type leaves everything as it is, and the response's outbox entry judges it instead.
-- @include lib/check-types.lua
-- @include lib/jobresponse-write.lua

-- Creates the response; its version (1), or 0 when it was not written.
local function jobResponseCreate(r)
  local checks = { { r.docKey, 'hash' }, { r.listKey, 'zset' }, { r.orderKey, 'string' }, { r.scopesKey, 'set' }, { r.changesKey, 'stream' },
    { r.ofOrderKey, 'zset' }, { r.failedKey, 'zset' }, { r.ordersKey, 'zset' } }
  if r.state ~= '' then checks[#checks + 1] = { r.stateKey, 'set' } end
  if wrongType(checks) then return 0 end
  if redis.call('EXISTS', r.docKey) == 1 then return 0 end
  jobResponseWrite(r, 1)
  return 1
end

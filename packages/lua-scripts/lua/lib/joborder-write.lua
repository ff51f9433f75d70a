-- The write of a checked job order put, shared by put-joborder-7 and the moves written with an SFC
-- job (lib/joborder-move.lua). `w` is a table:
--   docKey, listKey, scopesKey, changesKey   joborder:{id}, joborder:list:{scope}, scopes, changes:{scope}
--   searchKey                                joborder:search:{scope} (lib/joborder-search.lua)
--   scope, id, priority, doc, op, change, origin, channel   as put-joborder-7's ARGV
--   retainMs                                 > 0: unlist the job order and expire it after this many ms
--   facts                                    the search facts the caller passed (searchPassedFacts), or nil
-- @include lib/append-change.lua
-- @include lib/joborder-search.lua

local function jobOrderWrite(w, version)
  redis.call('HSET', w.docKey, 'v', tostring(version), 'scope', w.scope, 'op', w.op, 'doc', w.doc, 'priority', w.priority)
  if w.retainMs > 0 then
    redis.call('ZREM', w.listKey, w.id)
    redis.call('PEXPIRE', w.docKey, w.retainMs)
  else
    redis.call('PERSIST', w.docKey)
    redis.call('ZADD', w.listKey, w.priority, w.id)
  end
  jobOrderSearchWrite(w, version)
  redis.call('SADD', w.scopesKey, w.scope)
  appendChange(w.changesKey, w.channel, w.scope, 'joborder', w.id, w.change, version, w.op, w.origin)
end

-- A job order move written together with an SFC write (sfc-cas-many-0+): the versioned put of
-- put-joborder-7 for the engine's moves (no acceptance limit, no retention). A move is a table:
--   docKey, listKey, scopesKey, changesKey, searchKey   joborder:{id}, joborder:list:{scope}, scopes, changes:{scope}, joborder:search:{scope}
--   expected                                 the version the move was computed from (> 0)
--   scope, id, priority, doc, op, change, origin, channel   as put-joborder-7's ARGV
--   facts                                    its search facts (searchPassedFacts), or nil: read from the doc
-- It never refuses the SFC write: a key of another type, another version or another scope leaves
-- the job order as it is, and the move's outbox entry carries it out (or finds it moot) instead.
-- @include lib/check-types.lua
-- @include lib/check-version.lua
-- @include lib/joborder-write.lua

-- Writes the move; its new version, or 0 when it was not written.
local function jobOrderMoveApply(move)
  local badKey = wrongType({ { move.docKey, 'hash' }, { move.listKey, 'zset' }, { move.scopesKey, 'set' }, { move.changesKey, 'stream' }, { move.searchKey, 'zset' } })
  if badKey then return 0 end
  local versionOk, current = checkVersion(move.docKey, move.expected)
  if not versionOk or current == 0 then return 0 end
  if redis.call('HGET', move.docKey, 'scope') ~= move.scope then return 0 end
  local version = current + 1
  move.retainMs = 0
  jobOrderWrite(move, version)
  return version
end

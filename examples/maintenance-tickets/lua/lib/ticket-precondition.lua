-- The ticket's own library, included by its scripts with a path relative to them (./lib/...).
-- The by-status set a write touches was computed by the caller from the status it read: the write
-- goes ahead only when the stored status is still that one (else `retry`: the caller reads again).
-- Returns the early reply, or nil when the status is still the one read.
local function checkTicketStatus(docKey, readStatus)
  local stored = redis.call('HGET', docKey, 'status') or ''
  if stored ~= readStatus then return { 'retry', stored } end
  return nil
end

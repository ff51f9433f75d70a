-- Precondition shared by the delete scripts: the document exists, its version matches
-- (`expected` -1 = any), and its scope is still the one the caller read (else `retry`, so the
-- caller reads again and passes the right index keys). Returns an early reply, or nil and the
-- stored version.
local function checkDelete(docKey, expected, scope)
  local stored = redis.call('HMGET', docKey, 'v', 'scope')
  if not stored[1] then return { 'notfound' } end
  local current = tonumber(stored[1])
  if expected ~= -1 and expected ~= current then return { 'conflict', current } end
  if stored[2] ~= scope then return { 'retry', stored[2] or '' } end
  return nil, current
end

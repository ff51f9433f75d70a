-- Version compare shared by the document put scripts.
-- `expected`: 0 = create only, -1 = unconditional, n > 0 = must equal the stored version.
-- Returns ok (boolean) and the stored version (0 when the document does not exist).
-- Call it only after the type guard, since HGET on a non-hash raises.
local function checkVersion(docKey, expected)
  local stored = redis.call('HGET', docKey, 'v')
  local current = 0
  if stored then current = tonumber(stored) end
  if expected == -1 or expected == current then
    return true, current
  end
  return false, current
end

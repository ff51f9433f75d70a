-- The first step of every dedupe claim (dedupe-claim-1, dedupe-claim-admission-3,
-- dedupe-takeover-2): claim the key when it is free, else judge what it holds. Returns the reply
-- to give when the key is settled for the caller ({"claimed", 1} set now, {"claimed", 0} the
-- caller's own claim, {"done", reply} processed before), or nil and the stored value when another
-- claim holds it.
local function claimOrJudge(key, mine, leaseMs)
  if redis.call('SET', key, mine, 'NX', 'PX', leaseMs) then return { 'claimed', 1 } end
  local stored = redis.call('GET', key)
  if stored == 'done' then return { 'done', false } end
  if string.sub(stored, 1, 5) == 'done:' then return { 'done', string.sub(stored, 6) } end
  if stored == mine then return { 'claimed', 0 } end
  return nil, stored
end

-- What is left of the lease of the claim in `key`, floored at 0.
local function leaseLeft(key)
  local remaining = redis.call('PTTL', key)
  if remaining < 0 then remaining = 0 end
  return remaining
end

-- The token of the claim a stored value holds (false for a value that is no claim).
local function heldToken(stored)
  if string.sub(stored, 1, 11) == 'processing:' then return string.sub(stored, 12) end
  return false
end

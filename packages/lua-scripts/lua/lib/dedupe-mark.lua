-- The done mark of a claimed CloudEvent, shared by dedupe-done-1 and create-joborder-done-5.
-- A mark is written only while the caller still holds the claim: a caller whose lease expired
-- may have been overtaken by another claimer.

-- true when `key` holds the claim of `token`; else false and what it holds (false when gone).
local function dedupeHeld(key, token)
  local stored = redis.call('GET', key)
  if stored == 'processing:' .. token then return true end
  return false, stored
end

-- Marks the event done for `ttlMs`, with `reply` kept for duplicates (empty or nil: none).
local function dedupeMarkDone(key, ttlMs, reply)
  if reply == nil or reply == '' then
    redis.call('SET', key, 'done', 'PX', ttlMs)
  else
    redis.call('SET', key, 'done:' .. reply, 'PX', ttlMs)
  end
end

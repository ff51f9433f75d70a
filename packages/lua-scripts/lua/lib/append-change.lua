-- Appends one change entry to changes:{scope} (MAXLEN ~ 5000) and nudges its consumers.
-- The fields: kind, id, change, v, op, ts (server time, epoch ms), and
-- origin (who caused the write, JSON text) when the caller passes a non-empty one.
local function appendChange(changesKey, nudgeChannel, scope, kind, id, change, version, op, origin)
  local now = redis.call('TIME')
  local ts = tostring(tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000))
  if origin and origin ~= '' then
    redis.call('XADD', changesKey, 'MAXLEN', '~', '5000', '*',
      'kind', kind, 'id', id, 'change', change, 'v', tostring(version), 'op', op, 'ts', ts, 'origin', origin)
  else
    redis.call('XADD', changesKey, 'MAXLEN', '~', '5000', '*',
      'kind', kind, 'id', id, 'change', change, 'v', tostring(version), 'op', op, 'ts', ts)
  end
  redis.call('PUBLISH', nudgeChannel, scope)
end

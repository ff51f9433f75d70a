-- A retired or deleted job order ends the incidents of its job: its responses leave the failed
-- set of its scope (jobresponse:failed:{scope}), found through jobresponse:oforder:{orderId}.
-- The failed set holds an Aborted response only while its job order is listed (live). The job
-- response writes (lib/jobresponse-write.lua) keep the other side.

-- Removes the responses of the order from the failed set; how many were removed.
local function jobOrderUnfail(responsesKey, failedKey)
  local ids = redis.call('ZRANGE', responsesKey, 0, -1)
  if #ids == 0 then return 0 end
  return redis.call('ZREM', failedKey, unpack(ids))
end

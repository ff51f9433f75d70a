--[[
  Subtracts a batch of buckets that left their counter's window from the counter totals, in one
  atomic step. The caller read the members from the expiry zset; the script
  re-checks each one (still there, still due), so several daemons may sweep at once and a
  bucket is subtracted exactly once.

  KEYS[1] counter:expiry:{scope}   zset  `{journal}|{counter}|{value}|{bucket}`, score = when it leaves the window
  KEYS[2..] per member: counter:{scope}:{journal}:{counter} (hash), counter:bucket:...:{value} (hash)

  ARGV[1] now (epoch ms): members with a score at or below it are due
  ARGV[2] M: number of members
  ARGV[3..] per member 3 entries: the member, the value (the total's field), the bucket start (the bucket's field)

  Replies:
    {"ok", subtracted}   buckets subtracted (members no longer due or gone are skipped)
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua

local now, m = tonumber(ARGV[1]), tonumber(ARGV[2])
local checks = { { KEYS[1], 'zset' } }
for i = 1, m do
  checks[#checks + 1] = { KEYS[2 * i], 'hash' }
  checks[#checks + 1] = { KEYS[2 * i + 1], 'hash' }
end
local badKey, badType, wantType = wrongType(checks)
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local subtracted = 0
for i = 1, m do
  local member, value, bucket = ARGV[3 * i], ARGV[3 * i + 1], ARGV[3 * i + 2]
  local totals, buckets = KEYS[2 * i], KEYS[2 * i + 1]
  local score = redis.call('ZSCORE', KEYS[1], member)
  if score and tonumber(score) <= now then
    local amount = redis.call('HGET', buckets, bucket)
    if amount then
      redis.call('HINCRBYFLOAT', totals, value, -tonumber(amount))
      redis.call('HDEL', buckets, bucket)
      subtracted = subtracted + 1
    end
    redis.call('ZREM', KEYS[1], member)
    -- No bucket left: the total goes too (and no rounding residue of float sums stays behind).
    if redis.call('EXISTS', buckets) == 0 then redis.call('HDEL', totals, value) end
  end
end
return { 'ok', subtracted }

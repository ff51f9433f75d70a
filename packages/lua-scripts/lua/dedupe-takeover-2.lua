--[[
  Takes over the dedupe claim of a holder that died. A holder renews its liveness key while it
  runs, however long its handlers take; once that key is gone the holder has died (or lost
  Valkey for the key's whole lifetime), and the claim it left is the caller's now, instead of
  waiting out the whole lease. Only the very claim the caller found is taken (ARGV[1], from the
  busy reply of dedupe-claim-1.lua): a claim that changed meanwhile is judged as a claim would.
  The dead holder's later done mark or release compares its token and finds the caller's.

  KEYS[1] ce:dedupe:{hash}    string  "processing:{token}", "done" or "done:{reply}"
  KEYS[2] ce:holder:{holder}  any     liveness of the holder named in ARGV[1]: present while it lives

  ARGV[1] the token the caller found holding KEYS[1]
  ARGV[2] token of the caller
  ARGV[3] lease in ms (positive integer; validated by the caller)

  Replies:
    {"taken"}                         taken over from the dead holder: the caller holds it now
    {"claimed", 1}                    the key was free (done mark expired, claim given back) and
                                      is claimed now
    {"claimed", 0}                    the caller holds it already; nothing is refreshed
    {"done", reply}                   processed meanwhile; reply kept with the mark (false: none)
    {"busy", remainingMs}             the holder lives, or another token holds it now: remainingMs
                                      is the claim's PTTL, or the holder's liveness PTTL when that
                                      ends first (when to look again), floored at 0
    {"wrongtype", key, actualType, expectedType}
                                      KEYS[1] holds another type; nothing claimed
]]
-- @include lib/check-types.lua
-- @include lib/dedupe-claim.lua

local key, holderKey, found, token, leaseMs = KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3]
local mine = 'processing:' .. token

local badKey, badType, wantType = wrongType({ { key, 'string' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local settled, stored = claimOrJudge(key, mine, leaseMs)
if settled then return settled end

local remaining = leaseLeft(key)
if stored ~= 'processing:' .. found then return { 'busy', remaining } end

-- A liveness key of any type counts as alive: only its absence says the holder is gone.
local alive = redis.call('PTTL', holderKey)
if alive == -2 then
  redis.call('SET', key, mine, 'PX', leaseMs)
  return { 'taken' }
end
if alive >= 0 and alive < remaining then remaining = alive end
return { 'busy', remaining }

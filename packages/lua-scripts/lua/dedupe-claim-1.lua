--[[
  Claims a CloudEvent for processing. One atomic step replaces
  Python's SET NX / GET / three tries: the key cannot expire between the two reads here.

  KEYS[1] ce:dedupe:{hash}   string  "processing:{token}" with the lease TTL, or "done" /
                                     "done:{reply}" with the done TTL (the reply kept with the mark)

  ARGV[1] token of the caller
  ARGV[2] lease in ms (positive integer; validated by the caller)

  Replies:
    {"claimed", 1}                    the lease was set now
    {"claimed", 0}                    the caller already holds it; nothing is refreshed
    {"done", reply}                   the event was processed before; reply is the stored reply
                                      (false when none was kept)
    {"busy", remainingMs, token}      another token holds it (PTTL, floored at 0); token is the
                                      holder's (false for a value that is no claim), so the caller
                                      can take the claim over once that holder is dead
                                      (dedupe-takeover-2.lua)
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua
-- @include lib/dedupe-claim.lua

local key, token, leaseMs = KEYS[1], ARGV[1], ARGV[2]
local mine = 'processing:' .. token

local badKey, badType, wantType = wrongType({ { key, 'string' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local settled, stored = claimOrJudge(key, mine, leaseMs)
if settled then return settled end
return { 'busy', leaseLeft(key), heldToken(stored) }

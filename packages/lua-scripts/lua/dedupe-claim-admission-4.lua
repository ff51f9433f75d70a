--[[
  Claims a CloudEvent that asks to store a job order (Store, StoreAndStart) and, once claimed,
  reads what the store's admission needs: whether the id is taken, the scope's acceptance limit
  and which of the work masters the job order names are in the scope's work master list. The claim is dedupe-claim-1.lua's, step for step; the reads are the ones
  the processor would send next, so the request makes one round trip less. They only read: the
  limit itself is counted again inside the put.

  KEYS[1] ce:dedupe:{hash}          string  "processing:{token}", "done" or "done:{reply}"
  KEYS[2] joborder:{id}             hash    the job order the request would create
  KEYS[3] jobacceptance:{scope}     string  the scope's acceptance limit, if set
  KEYS[4] workmaster:list:{scope}   set     the scope's work master ids (read only when ARGV[3..] name some)

  ARGV[1] token of the caller
  ARGV[2] lease in ms (positive integer; validated by the caller)
  ARGV[3..] the work master ids the job order names (none: KEYS[4] is neither checked nor read)

  Replies:
    {"claimed", fresh, "admission", exists, limit, known1, known2, ...}
                                      fresh 1 when the lease was set now, 0 when the caller held
                                      it already; exists 1 when KEYS[2] holds a job order; limit
                                      the text of KEYS[3] (false when unset); known_i 1 when
                                      ARGV[2 + i] is in KEYS[4], else 0
    {"claimed", fresh, "wrongtype", key, actualType, expectedType}
                                      claimed, but KEYS[2], KEYS[3] or KEYS[4] holds another type: the
                                      admission fails as the processor's own read would
    {"done", reply}                   processed before; reply kept with the mark (false: none)
    {"busy", remainingMs, token}      another token holds it (PTTL, floored at 0); token is the
                                      holder's (false for a value that is no claim)
    {"wrongtype", key, actualType, expectedType}
                                      KEYS[1] holds another type; nothing claimed
]]
-- @include lib/check-types.lua
-- @include lib/dedupe-claim.lua

local key, docKey, limitKey, workMastersKey, token, leaseMs = KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2]
local mine = 'processing:' .. token

local badKey, badType, wantType = wrongType({ { key, 'string' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local settled, stored = claimOrJudge(key, mine, leaseMs)
if not settled then return { 'busy', leaseLeft(key), heldToken(stored) } end
if settled[1] == 'done' then return settled end
local fresh = settled[2]

local checks = { { docKey, 'hash' }, { limitKey, 'string' } }
if #ARGV > 2 then checks[3] = { workMastersKey, 'set' } end
local badAdmission, actual, expected = wrongType(checks)
if badAdmission then return { 'claimed', fresh, 'wrongtype', badAdmission, actual, expected } end
local exists = 0
if redis.call('EXISTS', docKey) == 1 then exists = 1 end
local reply = { 'claimed', fresh, 'admission', exists, redis.call('GET', limitKey) }
if #ARGV > 2 then
  local known = redis.call('SMISMEMBER', workMastersKey, unpack(ARGV, 3))
  for i = 1, #known do reply[5 + i] = known[i] end
end
return reply

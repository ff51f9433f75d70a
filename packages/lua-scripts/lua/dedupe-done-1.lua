--[[
  Marks a claimed CloudEvent as processed, but only while the caller still holds the
  lease: a caller whose lease expired may have been overtaken by another claimer. The reply to
  the event is kept with the mark, so a duplicate gets the same answer again.

  KEYS[1] ce:dedupe:{hash}   string

  ARGV[1] token of the caller
  ARGV[2] done TTL in ms (positive integer; validated by the caller)
  ARGV[3] the reply to keep (text); empty keeps none

  Replies:
    {"ok"}                            now "done" (or "done:{reply}") with the done TTL
    {"lost", stored}                  the caller does not hold the lease; stored is the current
                                      value (false when the key is gone); nothing written
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua
-- @include lib/dedupe-mark.lua

local key, token, ttlMs, reply = KEYS[1], ARGV[1], ARGV[2], ARGV[3]

local badKey, badType, wantType = wrongType({ { key, 'string' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local held, stored = dedupeHeld(key, token)
if not held then return { 'lost', stored } end
dedupeMarkDone(key, ttlMs, reply)
return { 'ok' }

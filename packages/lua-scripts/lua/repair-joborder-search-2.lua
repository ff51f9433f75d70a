--[[
  Index check and rebuild of the search index (lib/joborder-search.lua) for one job order: the
  members its document implies in the index of `scope` (none when the document is gone, of
  another scope, or retired) against those the index holds for it (its facts member's, plus
  `extra` members the caller saw). Check mode writes nothing; repair mode makes them equal.

  KEYS[1] joborder:{id}              hash  read only
  KEYS[2] joborder:search:{scope}    zset  the search index of `scope`

  ARGV[1] mode: "check" or "repair"
  ARGV[2] scope (KEYS[2] was built from it)
  ARGV[3] id
  ARGV[4...] members of KEYS[2] the caller found for the id (may be none)

  Replies:
    {"ok", count}                  check: entries missing or wrong; repair: entries added or removed
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua
-- @include lib/joborder-search.lua

local docKey, searchKey = KEYS[1], KEYS[2]
local mode, scope, id = ARGV[1], ARGV[2], ARGV[3]
local extra = {}
for i = 4, #ARGV do extra[#extra + 1] = ARGV[i] end

local badKey, badType, wantType = wrongType({ { docKey, 'hash' }, { searchKey, 'zset' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local escaped = searchEscape(id)
local stored = searchStored(searchKey, escaped)
local facts = nil
local fields = redis.call('HMGET', docKey, 'scope', 'doc', 'priority', 'created', 'ended')
if fields[1] == scope and fields[2] and redis.call('PTTL', docKey) == -1 then
  local state, wm, err = searchDocFacts(fields[2])
  facts = searchFactsOf(escaped, state, wm, err, fields[3] or 0, fields[4], fields[5], stored)
end

if mode == 'repair' then return { 'ok', searchReplace(searchKey, escaped, facts, extra) } end

local wanted, keep, count = facts and searchMembers(facts) or {}, {}, 0
for _, m in ipairs(wanted) do
  keep[m] = true
  if not redis.call('ZSCORE', searchKey, m) then count = count + 1 end
end
local held = stored and searchMembers(stored) or {}
for _, m in ipairs(extra) do held[#held + 1] = m end
local seen = {}
for _, m in ipairs(held) do
  if not keep[m] and not seen[m] and redis.call('ZSCORE', searchKey, m) then count = count + 1 end
  seen[m] = true
end
return { 'ok', count }

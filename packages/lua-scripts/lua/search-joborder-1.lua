--[[
  One page (or the count) of a job order search in one scope, over its search index
  (lib/joborder-search.lua). Read only. The driver is one dimension's lex ranges: the one the
  caller names (a later page keeps the first page's), else the one of the fewest members. The
  other filters are checked on the facts each member carries (the error text, unless the driver
  holds it, on the job order's facts member); at most `budget` members are looked at per call.

  KEYS[1] joborder:search:{scope}    zset

  ARGV[1]  mode: "page" or "count"
  ARGV[2]  driver: "" = choose; f (id prefix), s (states), w (work master), x (states and work master),
           c (created), e (ended), p (priority), r (error text)
  ARGV[3]  range index (1-based) to go on in; ARGV[4] the position to go on after ("" = from the start):
           a member's head up to and including its id (a longer text is cut there), so the position
           never depends on facts that change (a job order that changes state stays behind it).
           A driver of several ranges (states) walks them merged: range 1 and the text after
           the range's prefix ({created}\0{id})
  ARGV[5]  limit: the page size; in count mode "1" = count one by one only when every member fits
           the budget (else answer at once, not exact), "0" = as far as the budget goes
  ARGV[6]  budget (members looked at, at most)
  ARGV[7]  id prefix ("" = any); ARGV[8] states, joined by "," ("" = any); ARGV[9] work master ("" = any)
  ARGV[10] created from, ARGV[11] created to, ARGV[12] ended from, ARGV[13] ended to (ms, "" = open)
  ARGV[14] priority min, ARGV[15] priority max ("" = open)
  ARGV[16] error text, lower case ("" = any; only Aborted job orders have one)

  Replies:
    {"ok", driver, driverCount, exact, nextRange, nextAfter, matched, facts1, facts2, ...}
        driverCount: members in the driver's ranges; exact "1" when they are exactly the matches.
        Page mode: nextRange 0 when nothing is left; facts: the facts members of the matches, in
        order; matched 0. Count mode: matched counts the matches found from (range, after) on;
        exact "1" when that walk finished, else it goes on at (nextRange, nextAfter).
    {"wrongtype", key, actualType, expectedType}
]]
-- @include lib/check-types.lua
-- @include lib/joborder-search.lua

local key = KEYS[1]
local mode, forced, rangeAt, after = ARGV[1], ARGV[2], tonumber(ARGV[3]) or 1, ARGV[4]
local limit, budget = tonumber(ARGV[5]), tonumber(ARGV[6])
local q = {
  idPrefix = ARGV[7], wm = ARGV[9], errText = ARGV[16],
  cFrom = ARGV[10], cTo = ARGV[11], eFrom = ARGV[12], eTo = ARGV[13], pMin = ARGV[14], pMax = ARGV[15]
}
local states = {}
for s in string.gmatch(ARGV[8], '[^,]+') do states[#states + 1] = s end
if q.errText ~= '' then
  local aborted = #states == 0
  for _, s in ipairs(states) do if s == 'Aborted' then aborted = true end end
  states = aborted and { 'Aborted' } or {}
  if not aborted then return { 'ok', 's', 0, '1', 0, '', 0 } end
end

local badKey, badType, wantType = wrongType({ { key, 'zset' } })
if badKey then return { 'wrongtype', badKey, badType, wantType } end

local function t(ms) if ms == '' then return nil end return searchTime(ms) end
local function pr(p) if p == '' then return nil end return searchPriority(p) end

-- The lex range of members `prefix`..x with lo <= x <= hi (prefix ends in \0; nil = open).
local function range(prefix, lo, hi)
  local max = hi and ('(' .. prefix .. hi .. '\1') or ('(' .. string.sub(prefix, 1, -2) .. '\1')
  return { '[' .. prefix .. (lo or ''), max, prefix }
end

local candidates = {}
local function add(kind, ranges, down, covers) candidates[#candidates + 1] = { kind = kind, ranges = ranges, down = down, covers = covers } end
-- The error dimension first: on a tie it wins, as the only one that carries the error text.
if q.errText ~= '' then add('r', { range('r\0', t(q.cFrom), t(q.cTo)) }, true, { states = true, created = true }) end
if q.idPrefix ~= '' then
  local p = 'f\0' .. searchEscape(q.idPrefix)
  add('f', { { '[' .. p, '[' .. p .. '\255' } }, false, { idPrefix = true })
end
if #states > 0 then
  local ranges = {}
  for _, s in ipairs(states) do ranges[#ranges + 1] = range('s\0' .. searchEscape(s) .. '\0', t(q.cFrom), t(q.cTo)) end
  add('s', ranges, true, { states = true, created = true })
end
if q.wm ~= '' then
  add('w', { range('w\0' .. searchEscape(q.wm) .. '\0', t(q.cFrom), t(q.cTo)) }, true, { wm = true, created = true })
  if #states > 0 then
    local ranges = {}
    for _, s in ipairs(states) do ranges[#ranges + 1] = range('x\0' .. searchEscape(s) .. '\0' .. searchEscape(q.wm) .. '\0', t(q.cFrom), t(q.cTo)) end
    add('x', ranges, true, { states = true, wm = true, created = true })
  end
end
if q.eFrom ~= '' or q.eTo ~= '' then add('e', { range('e\0', t(q.eFrom), t(q.eTo)) }, true, { ended = true }) end
if q.pMin ~= '' or q.pMax ~= '' then add('p', { range('p\0', pr(q.pMin), pr(q.pMax)) }, true, { priority = true }) end
add('c', { range('c\0', t(q.cFrom), t(q.cTo)) }, true, { created = true })

local function countOf(c)
  local n = 0
  for _, r in ipairs(c.ranges) do n = n + redis.call('ZLEXCOUNT', key, r[1], r[2]) end
  return n
end

local driver, driverCount = nil, nil
for _, c in ipairs(candidates) do
  if forced == '' or forced == c.kind then
    local n = countOf(c)
    if not driver or n < driverCount then driver, driverCount = c, n end
    if forced ~= '' then break end
  end
end
if not driver then return redis.error_reply('unknown driver ' .. forced) end

local needs = {
  idPrefix = q.idPrefix ~= '' and not driver.covers.idPrefix,
  states = #states > 0 and not driver.covers.states,
  wm = q.wm ~= '' and not driver.covers.wm,
  created = (q.cFrom ~= '' or q.cTo ~= '') and not driver.covers.created,
  ended = (q.eFrom ~= '' or q.eTo ~= '') and not driver.covers.ended,
  priority = (q.pMin ~= '' or q.pMax ~= '') and not driver.covers.priority,
  err = q.errText ~= ''
}
local exact = true
for _, v in pairs(needs) do if v then exact = false end end

local stateSet = {}
for _, s in ipairs(states) do stateSet[searchEscape(s)] = true end
local idPrefix, wmWanted = searchEscape(q.idPrefix), searchEscape(q.wm)
local cFrom, cTo, eFrom, eTo, pMin, pMax = t(q.cFrom), t(q.cTo), t(q.eFrom), t(q.eTo), pr(q.pMin), pr(q.pMax)

local function between(v, lo, hi) return (not lo or v >= lo) and (not hi or v <= hi) end

-- The error, from the member when it carries one, else from the job order's facts member.
local function errorOf(f)
  if f.err then return f.err end
  local stored = searchStored(key, f.id)
  return stored and stored.err or ''
end

local function matches(f)
  if needs.idPrefix and string.sub(f.id, 1, #idPrefix) ~= idPrefix then return false end
  if needs.states and not stateSet[f.state] then return false end
  if needs.wm and f.wm ~= wmWanted then return false end
  if needs.created and not between(f.created, cFrom, cTo) then return false end
  if needs.ended and (f.ended == '' or not between(f.ended, eFrom, eTo)) then return false end
  if needs.priority and not between(f.priority, pMin, pMax) then return false end
  if needs.err and not string.find(string.lower(errorOf(f)), q.errText, 1, true) then return false end
  return true
end

-- The facts member of a match, for the reply.
local function factsMember(f)
  if driver.kind == 'f' then return f.member end
  local stored = searchStored(key, f.id)
  return stored and stored.member
end

-- Walks the driver's ranges from (rangeAt, after), calling take(facts, range, member) per match
-- until it returns false: 'full'. 'budget' when `budget` members were looked at, else 'done'.
-- lastRange, lastMember: the last member looked at (where a later call goes on).
local looked, lastRange, lastMember = 0, 0, ''
after = searchPosition(after)
local walk
function walk(take)
  local chunk = math.max(limit + 1, 64)
  for i = rangeAt, #driver.ranges do
    local lo, hi = driver.ranges[i][1], driver.ranges[i][2]
    -- Just past every member of the position's head and id, in the walking direction.
    local from = nil
    if i == rangeAt and after ~= '' then from = driver.down and ('(' .. after .. '\0') or ('(' .. after .. '\1') end
    while true do
      local batch
      if driver.down then batch = redis.call('ZREVRANGEBYLEX', key, from or hi, lo, 'LIMIT', 0, chunk)
      else batch = redis.call('ZRANGEBYLEX', key, from or lo, hi, 'LIMIT', 0, chunk) end
      for _, member in ipairs(batch) do
        if looked >= budget then return 'budget' end
        local f = (exact and mode == 'count') or searchParseFacts(member)
        if f and (exact or matches(f)) and not take(f, i, member) then return 'full' end
        looked, lastRange, lastMember = looked + 1, i, searchPosition(member)
      end
      if #batch < chunk then break end
      from = '(' .. batch[#batch]
    end
  end
  return 'done'
end

-- Byte order (Lua's `<` follows the server's locale).
local function lexLess(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

-- Several ranges of one dimension (a state each) are walked as one, newest first by what follows
-- their prefix ({created}\0{id}), so a job order that moves to another of the states after it was
-- handed out stays behind the position (then that text, range 1) whichever range it moves to.
-- Each round reads a chunk below the position from every range; what sorts below the highest last
-- member of a full chunk waits for the next round.
local function mergedWalk(take)
  local chunk, at = math.max(limit + 1, 64), after
  while true do
    local items, floor = {}, nil
    for i, r in ipairs(driver.ranges) do
      local batch = redis.call('ZREVRANGEBYLEX', key, at ~= '' and ('(' .. r[3] .. at .. '\0') or r[2], r[1], 'LIMIT', 0, chunk)
      for _, m in ipairs(batch) do items[#items + 1] = { k = string.sub(searchPosition(m), #r[3] + 1), m = m } end
      local last = items[#items]
      if #batch == chunk and (not floor or lexLess(floor, last.k)) then floor = last.k end
    end
    table.sort(items, function(a, b) return lexLess(b.k, a.k) end)
    for _, it in ipairs(items) do
      if floor and lexLess(it.k, floor) then break end
      if looked >= budget then return 'budget' end
      local f = (exact and mode == 'count') or searchParseFacts(it.m)
      if f and (exact or matches(f)) and not take(f, 1, it.m) then return 'full' end
      looked, lastRange, lastMember, at = looked + 1, 1, it.k, it.k
    end
    if not floor then return 'done' end
  end
end
if #driver.ranges > 1 then walk = mergedWalk end

if mode == 'count' then
  if exact then return { 'ok', driver.kind, driverCount, '1', 0, '', driverCount } end
  if limit == 1 and driverCount > budget then return { 'ok', driver.kind, driverCount, '0', 0, '', 0 } end
  local n = 0
  local status = walk(function() n = n + 1; return true end)
  if status == 'done' then return { 'ok', driver.kind, driverCount, '1', 0, '', n } end
  return { 'ok', driver.kind, driverCount, '0', lastRange, lastMember, n }
end

local reply = { 'ok', driver.kind, driverCount, exact and '1' or '0', 0, '', 0 }
local taken = 0
local status = walk(function(f)
  if taken == limit then return false end
  local full = factsMember(f)
  if full then
    taken = taken + 1
    reply[#reply + 1] = full
  end
  return true
end)
if status ~= 'done' then reply[5], reply[6] = lastRange, lastMember end
return reply

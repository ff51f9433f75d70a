-- The search index of a scope's job orders (joborder:search:{scope}): one sorted set, every
-- score 0, read by lex range (ZRANGEBYLEX, ZLEXCOUNT), so one key per scope holds every
-- dimension and a count is O(log n). Every member is a head that orders it, then the job order's
-- small facts (the tail: id, state, created, ended, priority, workMaster), so a search checks
-- its other filters on the member itself, without a second read. Fields are joined by \0:
--   f {tail} {error}                          the facts by id (an id prefix is a range of these)
--   c {created} {tail}     s {state} {created} {tail}     p {priority} {created} {tail}
--   w {workMaster} {created} {tail}  x {state} {workMaster} {created} {tail}   (with a work master)
--   e {ended} {tail}   (once Ended or Aborted)    r {created} {tail} {error}   (Aborted with a reason)
-- Times are 13-digit ms ('' = not ended), the priority fixed-width (searchPriority). Ids, work
-- masters, states and errors are escaped (searchEscape) so they hold no \0, and a prefix of an
-- escaped id is the escape of a prefix. The error is the comment of an Aborted job order: the
-- reason the engine or the operator gave.

local function searchEscape(s) return (string.gsub(s, '[%z\1]', { ['\0'] = '\1\2', ['\1'] = '\1\1' })) end

local function searchTime(ms) return string.format('%013d', math.max(0, math.floor(tonumber(ms) or 0))) end

-- Fixed width, so text order is number order (clamped to +-1e9).
local function searchPriority(p)
  local n = math.max(-1e9, math.min(1e9, tonumber(p) or 0))
  return string.format('%015.4f', n + 1e9)
end

-- How many head fields each kind of member has before its tail.
local searchHeads = { f = 0, c = 1, s = 2, p = 2, w = 2, x = 3, e = 1, r = 1 }

local function searchTail(f) return table.concat({ f.id, f.state, f.created, f.ended, f.priority, f.wm }, '\0') end

-- One string.match per member (one C call): the head skipped, the tail captured, the rest '' or \0{error}.
local searchPatterns = {}
for kind, h in pairs(searchHeads) do
  searchPatterns[kind] = '^' .. string.rep('[^%z]*%z', h + 1) .. string.rep('([^%z]*)%z', 5) .. '([^%z]*)(.*)$'
end

-- A member's head up to and including its id (the member itself when shorter): where a search
-- goes on. It names no fact that can change, so a job order whose state (or error) changes after
-- it was handed out stays on the walked side of it.
local searchPositionPatterns = {}
for kind, h in pairs(searchHeads) do searchPositionPatterns[kind] = '^(' .. string.rep('[^%z]*%z', h + 1) .. '[^%z]*)' end
local function searchPosition(member)
  local pattern = searchPositionPatterns[string.sub(member, 1, 1)]
  return pattern and string.match(member, pattern) or member
end

-- The facts a member carries (err only on f and r members), or nil for no member of the index.
local function searchParseFacts(member)
  local pattern = searchPatterns[string.sub(member, 1, 1)]
  if not pattern then return nil end
  local id, state, created, ended, priority, wm, rest = string.match(member, pattern)
  if not id then return nil end
  local err = nil
  if rest ~= '' then err = string.sub(rest, 2) end
  return { id = id, state = state, created = created, ended = ended, priority = priority, wm = wm, err = err, member = member }
end

-- The facts member of (escaped) id, or nil.
local function searchStored(searchKey, id)
  local found = redis.call('ZRANGEBYLEX', searchKey, '[f\0' .. id .. '\0', '(f\0' .. id .. '\1', 'LIMIT', 0, 1)
  if found[1] then return searchParseFacts(found[1]) end
  return nil
end

local function searchMembers(f)
  local tail = searchTail(f)
  local m = {
    'f\0' .. tail .. '\0' .. f.err,
    'c\0' .. f.created .. '\0' .. tail,
    's\0' .. f.state .. '\0' .. f.created .. '\0' .. tail,
    'p\0' .. f.priority .. '\0' .. f.created .. '\0' .. tail
  }
  if f.wm ~= '' then
    m[#m + 1] = 'w\0' .. f.wm .. '\0' .. f.created .. '\0' .. tail
    m[#m + 1] = 'x\0' .. f.state .. '\0' .. f.wm .. '\0' .. f.created .. '\0' .. tail
  end
  if f.ended ~= '' then m[#m + 1] = 'e\0' .. f.ended .. '\0' .. tail end
  if f.err ~= '' then m[#m + 1] = 'r\0' .. f.created .. '\0' .. tail .. '\0' .. f.err end
  return m
end

local function searchIsFinished(state) return state == 'Aborted' or string.sub(state, 1, 6) == 'Ended_' end

-- State, work master and error of a job order document (JSON text); '' for what it lacks.
local function searchDocFacts(docText)
  local ok, parsed = pcall(cjson.decode, docText)
  local state, wm, err = '', '', ''
  if not ok or type(parsed) ~= 'table' then return state, wm, err end
  local st = parsed.State
  if type(st) == 'table' and type(st[1]) == 'table' and type(st[1].StateText) == 'table' and type(st[1].StateText.Text) == 'string' then
    state = st[1].StateText.Text
    if type(st[2]) == 'table' and type(st[2].StateText) == 'table' and type(st[2].StateText.Text) == 'string' then
      state = state .. '_' .. st[2].StateText.Text
    end
  end
  local jo = parsed.JobOrder
  if type(jo) == 'table' and type(jo.WorkMasterID) == 'table' and type(jo.WorkMasterID[1]) == 'table' and type(jo.WorkMasterID[1].ID) == 'string' then
    wm = jo.WorkMasterID[1].ID
  end
  if state == 'Aborted' and type(parsed.Comment) == 'string' then
    -- At most 500 bytes, never cut inside a UTF-8 character (the member must stay text): the cut
    -- steps back while the first byte left out continues a character.
    err = parsed.Comment
    local cut = math.min(#err, 500)
    while cut < #err and cut > 0 and string.byte(err, cut + 1) >= 128 and string.byte(err, cut + 1) < 192 do cut = cut - 1 end
    err = string.sub(err, 1, cut)
  end
  return state, wm, err
end

-- The facts a caller passed for a write (state, work master, error: what searchDocFacts reads from
-- the document, so a write need not decode it), or nil and what is wrong with them.
local function searchPassedFacts(state, wm, err)
  if state == nil or wm == nil or err == nil then return nil, 'search facts: state, work master and error are needed' end
  if #err > 500 then return nil, 'search facts: the error is over 500 bytes' end
  if err ~= '' and state ~= 'Aborted' then return nil, 'search facts: an error is only for state Aborted' end
  return { state, wm, err }
end

-- The search facts a script's caller may pass as its last three arguments, after the `fixed`
-- ones: nil (none passed: the script decodes the document), or why the arguments are malformed.
local function searchTrailingFacts(argv, fixed)
  if #argv == fixed + 3 then return searchPassedFacts(argv[fixed + 1], argv[fixed + 2], argv[fixed + 3]) end
  if #argv > fixed then return nil, #argv .. ' arguments; the search facts are three' end
  return nil, nil
end

-- The facts a document implies. created/ended: the document's fields; a document written before
-- they existed keeps what its index entry says (or 0 / the time it is first seen finished).
local function searchFactsOf(id, state, wm, err, priority, created, ended, stored)
  if not created then created = stored and stored.created or searchTime(0) else created = searchTime(created) end
  if searchIsFinished(state) then
    if ended then ended = searchTime(ended) else ended = stored and stored.ended ~= '' and stored.ended or created end
  else
    ended = ''
  end
  return { id = id, state = searchEscape(state), created = created, ended = ended, priority = searchPriority(priority), wm = searchEscape(wm), err = searchEscape(err) }
end

-- Replaces the members of (escaped) id by those of `facts` (nil = none), touching only the members
-- that differ (an update that changes no fact writes nothing); returns the number changed.
local function searchReplace(searchKey, id, facts, extra)
  local stored = searchStored(searchKey, id)
  -- The facts member holds every fact: the same one means the same members.
  if facts and stored and not extra and stored.member == 'f\0' .. searchTail(facts) .. '\0' .. facts.err then return 0 end
  local wanted, keep, held = facts and searchMembers(facts) or {}, {}, {}
  for _, m in ipairs(wanted) do keep[m] = true end
  local gone = {}
  for _, m in ipairs(stored and searchMembers(stored) or {}) do
    held[m] = true
    if not keep[m] then gone[#gone + 1] = m end
  end
  for _, m in ipairs(extra or {}) do if not keep[m] then gone[#gone + 1] = m end end
  local changed = 0
  if #gone > 0 then changed = changed + redis.call('ZREM', searchKey, unpack(gone)) end
  local args = {}
  -- A member the facts member names is there unless the index was broken: `extra` (a repair) re-adds all.
  for _, m in ipairs(wanted) do
    if extra or not held[m] then args[#args + 1] = 0; args[#args + 1] = m end
  end
  if #args > 0 then changed = changed + redis.call('ZADD', searchKey, unpack(args)) end
  return changed
end

local function searchNowMs()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The search entries of a job order just written (`w` as jobOrderWrite's): its creation and end
-- times kept on the document, its members replaced; a retired one leaves the index. `w.facts`:
-- the caller's searchPassedFacts; without them the document is decoded for them.
local function jobOrderSearchWrite(w, version)
  local id = searchEscape(w.id)
  if w.retainMs > 0 then return searchReplace(w.searchKey, id, nil) end
  local times = redis.call('HMGET', w.docKey, 'created', 'ended')
  local created, ended = times[1], times[2]
  if not created and version == 1 then
    created = tostring(searchNowMs())
    redis.call('HSET', w.docKey, 'created', created)
  end
  local stored = (not created) and searchStored(w.searchKey, id) or nil
  local state, wm, err
  if w.facts then state, wm, err = w.facts[1], w.facts[2], w.facts[3] else state, wm, err = searchDocFacts(w.doc) end
  if searchIsFinished(state) then
    if not ended then ended = tostring(searchNowMs()); redis.call('HSET', w.docKey, 'ended', ended) end
  elseif ended then
    redis.call('HDEL', w.docKey, 'ended')
    ended = nil
  end
  return searchReplace(w.searchKey, id, searchFactsOf(id, state, wm, err, w.priority, created, ended, stored))
end

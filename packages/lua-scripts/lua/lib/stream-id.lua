-- Stream id comparison without floating point: an id is "ms-seq", both parts canonical decimals
-- (no leading zeros), so comparing by length, then as text, is exact for any size.
local function compareDecimal(a, b)
  if #a ~= #b then return #a < #b and -1 or 1 end
  if a == b then return 0 end
  return a < b and -1 or 1
end

local function compareStreamId(a, b)
  local aMs, aSeq = string.match(a, '^(%d+)-(%d+)$')
  local bMs, bSeq = string.match(b, '^(%d+)-(%d+)$')
  local byMs = compareDecimal(aMs, bMs)
  if byMs ~= 0 then return byMs end
  return compareDecimal(aSeq, bSeq)
end

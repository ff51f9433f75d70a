-- Type guard shared by every writing script (validate before the first
-- write). `expected` is a list of {key, type}; a key that does not exist passes.
-- Returns nil when every key is writable, else the offending key, the type it holds and the
-- type it should hold.
local function wrongType(expected)
  for _, pair in ipairs(expected) do
    local actual = redis.call('TYPE', pair[1])['ok']
    if actual ~= 'none' and actual ~= pair[2] then
      return pair[1], actual, pair[2]
    end
  end
  return nil
end

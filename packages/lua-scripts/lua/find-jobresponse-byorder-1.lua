--[[
  Finds the job response of a job order in one round trip: reads the by-order pointer and the
  document it names.

  KEYS[1] jobresponse:byorder:{orderId}   string  response id

  Read-only exception to "every key in KEYS": the document key depends on the stored pointer,
  so it cannot be known beforehand. The script builds it as ARGV[1] followed by the id encoded
  exactly as keyschema/KeyPart.ts does (`%`, `:`, `|`, bytes below 0x21 and 0x7F as %XX). It
  only reads, so atomicity is not at stake, and islands never run in cluster mode.

  ARGV[1] document key head: {prefix}:jobresponse: (a response key without its id)
  ARGV[2] job order id (the document must still carry it; a stale pointer is not a match)

  Replies:
    {"ok", id, version, scope, state, order, op, doc}
    {"notfound"}                    no pointer, pointer to a missing document, or a stale pointer
    {"wrongtype", key, actualType, expectedType}   the pointer or the document key is corrupted
]]

local function encodePart(part)
  return (string.gsub(part, '[%z\1-\32\127%%:|]', function(c) return string.format('%%%02X', string.byte(c)) end))
end

local function typeOf(key) return redis.call('TYPE', key)['ok'] end

local pointerType = typeOf(KEYS[1])
if pointerType == 'none' then return { 'notfound' } end
if pointerType ~= 'string' then return { 'wrongtype', KEYS[1], pointerType, 'string' } end
local id = redis.call('GET', KEYS[1])
local docKey = ARGV[1] .. encodePart(id)
local docType = typeOf(docKey)
if docType == 'none' then return { 'notfound' } end
if docType ~= 'hash' then return { 'wrongtype', docKey, docType, 'hash' } end
local f = redis.call('HMGET', docKey, 'v', 'scope', 'state', 'order', 'op', 'doc')
if not f[1] or not f[6] or f[4] ~= ARGV[2] then return { 'notfound' } end
return { 'ok', id, f[1], f[2] or '', f[3] or '', f[4], f[5] or '', f[6] }

/**
 * How deeply a payload nests, read from its bytes before it is parsed. A payload within the size
 * limit can still nest 100,000 levels deep: `JSON.parse` and the MessagePack decoder build that
 * without complaint, but everything after them that walks the value recursively
 * (`JSON.stringify` when it is stored, schema decoding, logging) overflows the stack. Counting
 * first refuses it before any of that value exists. Both scans are one pass with no allocation
 * per byte; a payload that is malformed in other ways is left to the parser to refuse.
 */

/** Default deepest nesting accepted: a job order is about 3 levels deep, a work master 6. */
export const DEFAULT_MAX_NESTING_DEPTH = 64

const QUOTE = 0x22
const BACKSLASH = 0x5c

/**
 * Whether JSON text (UTF-8 bytes) opens more than `max` arrays or objects inside each other. Bytes
 * in strings do not count; a multi-byte UTF-8 sequence never holds an ASCII byte, so scanning bytes
 * is exact.
 */
export const jsonNestsDeeperThan = (bytes: Uint8Array, max: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!
    if (inString) {
      if (byte === BACKSLASH) i++
      else if (byte === QUOTE) inString = false
    } else if (byte === QUOTE) inString = true
    else if (byte === 0x5b || byte === 0x7b) {
      if (++depth > max) return true
    } else if (byte === 0x5d || byte === 0x7d) depth--
  }
  return false
}

/** The size of the header and body of one MessagePack item, whether it is an array or map, and how many items it contains. */
interface Item {
  readonly bytes: number
  readonly container: boolean
  readonly children: number
}

const uint = (bytes: Uint8Array, at: number, width: 1 | 2 | 4): number => {
  let value = 0
  for (let k = 0; k < width; k++) value = value * 256 + (bytes[at + k] ?? 0)
  return value
}

const scalar = (size: number): Item => ({ bytes: size, container: false, children: 0 })
const container = (size: number, children: number): Item => ({ bytes: size, container: true, children })

// The MessagePack format: https://github.com/msgpack/msgpack/blob/master/spec.md
const itemAt = (bytes: Uint8Array, at: number): Item => {
  const head = bytes[at]!
  if (head <= 0x7f || head >= 0xe0) return scalar(1)
  if (head <= 0x8f) return container(1, (head & 0x0f) * 2)
  if (head <= 0x9f) return container(1, head & 0x0f)
  if (head <= 0xbf) return scalar(1 + (head & 0x1f))
  switch (head) {
    case 0xc4: return scalar(2 + uint(bytes, at + 1, 1))
    case 0xc5: return scalar(3 + uint(bytes, at + 1, 2))
    case 0xc6: return scalar(5 + uint(bytes, at + 1, 4))
    case 0xc7: return scalar(3 + uint(bytes, at + 1, 1))
    case 0xc8: return scalar(4 + uint(bytes, at + 1, 2))
    case 0xc9: return scalar(6 + uint(bytes, at + 1, 4))
    case 0xca: case 0xce: case 0xd2: return scalar(5)
    case 0xcb: case 0xcf: case 0xd3: return scalar(9)
    case 0xcc: case 0xd0: return scalar(2)
    case 0xcd: case 0xd1: return scalar(3)
    case 0xd4: return scalar(3)
    case 0xd5: return scalar(4)
    case 0xd6: return scalar(6)
    case 0xd7: return scalar(10)
    case 0xd8: return scalar(18)
    case 0xd9: return scalar(2 + uint(bytes, at + 1, 1))
    case 0xda: return scalar(3 + uint(bytes, at + 1, 2))
    case 0xdb: return scalar(5 + uint(bytes, at + 1, 4))
    case 0xdc: return container(3, uint(bytes, at + 1, 2))
    case 0xdd: return container(5, uint(bytes, at + 1, 4))
    case 0xde: return container(3, uint(bytes, at + 1, 2) * 2)
    case 0xdf: return container(5, uint(bytes, at + 1, 4) * 2)
    default: return scalar(1) // nil, false, true and the unused 0xc1 (the decoder refuses that)
  }
}

/** Whether MessagePack bytes hold more than `max` arrays or maps inside each other. */
export const msgpackNestsDeeperThan = (bytes: Uint8Array, max: number): boolean => {
  // For each open array or map, how many of its items are still to come.
  const open: Array<number> = []
  let at = 0
  while (at < bytes.length) {
    const item = itemAt(bytes, at)
    at += item.bytes
    // An empty array or map is a level too, as in JSON.
    if (item.container && open.length + 1 > max) return true
    if (item.children > 0) {
      open.push(item.children)
      continue
    }
    // A scalar or an empty container completes one item of the innermost open container, which
    // may complete that container in turn.
    while (open.length > 0) {
      const left = open[open.length - 1]! - 1
      if (left > 0) {
        open[open.length - 1] = left
        break
      }
      open.pop()
    }
    if (open.length === 0) return false
  }
  return false
}

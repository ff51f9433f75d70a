/**
 * Key-part encoding.
 *
 * `%`, `:`, `|` and every byte below 0x21 or equal to 0x7F become `%XX` (upper-case hex).
 * Everything else is kept, so ordinary ids stay readable in `redis-cli`. Because the
 * separators can never appear inside an encoded part, the mapping from (family, parts)
 * to key is injective.
 */

/** Longest accepted part, in UTF-8 bytes, before encoding. */
export const MAX_KEY_PART_BYTES = 512

export type KeyPartProblem = "empty" | "too-long" | "invalid-utf8" | "contains-colon" | "not-allowed"

/** Why a key part was refused. A value, not an exception: callers map it to their own error. */
export class KeyPartError {
  readonly _tag = "KeyPartError"
  constructor(
    readonly problem: KeyPartProblem,
    readonly name: string,
    readonly message: string
  ) {}
}

const needsEscape = (code: number): boolean =>
  code < 0x21 || code === 0x7f || code === 0x25 /* % */ || code === 0x3a /* : */ || code === 0x7c /* | */

const hex = (code: number): string => "%" + code.toString(16).toUpperCase().padStart(2, "0")

/** Checks a raw part; returns the problem or `undefined` when it is acceptable. */
export const checkKeyPart = (name: string, value: string): KeyPartError | undefined => {
  if (value.length === 0) return new KeyPartError("empty", name, `${name} must not be empty`)
  if (!value.isWellFormed()) {
    return new KeyPartError("invalid-utf8", name, `${name} is not well-formed UTF-8 (lone surrogate)`)
  }
  const bytes = Buffer.byteLength(value, "utf8")
  if (bytes > MAX_KEY_PART_BYTES) {
    return new KeyPartError("too-long", name, `${name} is ${bytes} bytes; the limit is ${MAX_KEY_PART_BYTES}`)
  }
  return undefined
}

/** Encodes a part that already passed {@link checkKeyPart}. */
const anyEscape = /[\x00-\x20\x7f%:|]/

export const encodeKeyPartUnchecked = (value: string): string => {
  // Most ids need no escaping: one regex test instead of a char-by-char copy.
  if (!anyEscape.test(value)) return value
  let out = ""
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    out += needsEscape(code) ? hex(code) : value[i]
  }
  return out
}

/** Validates and encodes one key part. */
export const encodeKeyPart = (name: string, value: string): string | KeyPartError =>
  checkKeyPart(name, value) ?? encodeKeyPartUnchecked(value)

const escapePattern = /%([0-9A-F]{2})/g

/** Inverse of {@link encodeKeyPartUnchecked}. Only ASCII bytes are ever escaped, so one char per escape. */
export const decodeKeyPart = (encoded: string): string =>
  encoded.replace(escapePattern, (_, h: string) => String.fromCharCode(parseInt(h, 16)))

import { compiledFamilies, compiledFamily, isReferenceKind, type KeyFamily, type KeyParts, tokenize } from "./KeyFamilies.js"
import { checkKeyPart, decodeKeyPart, encodeKeyPartUnchecked, KeyPartError } from "./KeyPart.js"

export const DEFAULT_PREFIX = "microdcs"

/** A key turned back into its family and decoded parts (for the admin CLI and index rebuild). */
export interface ParsedKey<F extends KeyFamily = KeyFamily> {
  readonly family: F
  readonly parts: KeyParts<F>
}

/**
 * The one key builder of an island. Every key string in the project comes from here.
 * Builders return the key, or a {@link KeyPartError} naming the offending part; they never throw.
 */
export interface KeySchema {
  readonly prefix: string
  /** Builds the key of `family` from its named parts. */
  readonly key: <F extends KeyFamily>(family: F, parts: KeyParts<F>) => string | KeyPartError
  /** The glob that matches every key of `family` (for SCAN); parts are wildcards. */
  readonly pattern: (family: KeyFamily) => string
  /** Parses a full key (with prefix); `undefined` when it belongs to no family of this prefix. */
  readonly parse: (key: string) => ParsedKey | undefined
}

const validatePrefix = (prefix: string): KeyPartError | undefined => {
  const problem = checkKeyPart("prefix", prefix)
  if (problem) return problem
  if (prefix.includes(":")) return new KeyPartError("contains-colon", "prefix", "prefix must not contain ':'")
  return undefined
}

/** Creates the key schema of one island. Fails when the prefix itself is not acceptable. */
export const makeKeySchema = (prefix: string = DEFAULT_PREFIX): KeySchema | KeyPartError => {
  const problem = validatePrefix(prefix)
  if (problem) return problem
  const head = encodeKeyPartUnchecked(prefix) + ":"

  const key = <F extends KeyFamily>(family: F, parts: KeyParts<F>): string | KeyPartError => {
    const values = parts as Readonly<Record<string, string>>
    let out = head
    for (const token of compiledFamily(family)) {
      out += token.separator
      if (token.literal !== undefined) {
        out += token.literal
        continue
      }
      const name = token.part!
      const value = values[name]
      if (typeof value !== "string") return new KeyPartError("empty", name, `${name} is missing`)
      const bad = checkKeyPart(name, value)
      if (bad) return bad
      if (family === "referenceList" && name === "kind" && !isReferenceKind(value)) {
        return new KeyPartError("not-allowed", name, `kind '${value}' is not a reference list kind`)
      }
      out += encodeKeyPartUnchecked(value)
    }
    return out
  }

  const pattern = (family: KeyFamily): string =>
    head.replace(/[*?[\]\\]/g, (c) => "\\" + c) +
    compiledFamily(family)
      .map((t) => t.separator + (t.literal ?? "*"))
      .join("")

  const parse = (full: string): ParsedKey | undefined => {
    if (!full.startsWith(head)) return undefined
    const tokens = tokenize(full.slice(head.length))
    for (const [family, template] of compiledFamilies) {
      if (template.length !== tokens.length) continue
      const parts: Record<string, string> = {}
      let matches = true
      for (let i = 0; i < template.length && matches; i++) {
        const t = template[i]!
        const k = tokens[i]!
        if (t.separator !== k.separator) matches = false
        else if (t.literal !== undefined) matches = t.literal === k.text
        else if (k.text.length === 0) matches = false
        else parts[t.part!] = decodeKeyPart(k.text)
      }
      if (matches) return { family, parts } as ParsedKey
    }
    return undefined
  }

  return { prefix, key, pattern, parse }
}

import { KeyFamilyError, type RegisteredFamily, registerFamilies } from "./FamilyRegistration.js"
import { coreRegisteredFamilies, type KeyFamily, type keyFamilies, type KeyParts } from "./KeyFamilies.js"
import type { FamilyTemplates, KeyFamilySet } from "./KeyFamilySet.js"
import { checkKeyPart, decodeKeyPart, encodeKeyPartUnchecked, KeyPartError } from "./KeyPart.js"
import { type TemplateParts, tokenize } from "./KeyTemplate.js"
import { ruleAccepts, ruleRefusal } from "./PartRule.js"

export const DEFAULT_PREFIX = "microdcs"

/** The templates of the core families, the `T` of every schema before extensions. */
export type CoreFamilyTemplates = typeof keyFamilies

/** A key turned back into its family and decoded parts (for the admin CLI and index rebuild). */
export interface ParsedKey<F extends KeyFamily = KeyFamily> {
  readonly family: F
  readonly parts: KeyParts<F>
}

/** A parsed key of a schema over `T`: checking `family` narrows `parts` to that family's parts. */
export type ParsedKeyOf<T extends FamilyTemplates> = {
  readonly [F in keyof T & string]: { readonly family: F; readonly parts: TemplateParts<T[F]> }
}[keyof T & string]

/**
 * A key schema over the families `T` (the core ones plus those registered with `extend`). Builders
 * return the key, or a {@link KeyPartError} naming the offending part; they never throw.
 */
export interface KeySchemaOf<T extends FamilyTemplates> {
  readonly prefix: string
  /** Every family of the schema, in registration order. */
  readonly families: ReadonlyArray<RegisteredFamily<keyof T & string>>
  /** Builds the key of `family` from its named parts. */
  readonly key: <F extends keyof T & string>(family: F, parts: TemplateParts<T[F]>) => string | KeyPartError
  /** The glob that matches every key of `family` (for SCAN); parts are wildcards. */
  readonly pattern: (family: keyof T & string) => string
  /** Parses a full key (with prefix); `undefined` when it belongs to no family of this schema. */
  readonly parse: (key: string) => ParsedKeyOf<T> | undefined
  /** The same schema with `families` registered too, or why they were refused (nothing changes). */
  readonly extend: <U extends FamilyTemplates>(families: KeyFamilySet<U>) => KeySchemaOf<T & U> | KeyFamilyError
}

/**
 * The key schema of the core families, as the store holds it. Every key string in the project
 * comes from a schema. `extend` gives a {@link KeySchemaOf} that also knows an extension's families.
 */
export interface KeySchema {
  readonly prefix: string
  readonly families: ReadonlyArray<RegisteredFamily<KeyFamily>>
  /** Builds the key of `family` from its named parts. */
  readonly key: <F extends KeyFamily>(family: F, parts: KeyParts<F>) => string | KeyPartError
  /** The glob that matches every key of `family` (for SCAN); parts are wildcards. */
  readonly pattern: (family: KeyFamily) => string
  /** Parses a full key (with prefix); `undefined` when it belongs to no family of this prefix. */
  readonly parse: (key: string) => ParsedKey | undefined
  readonly extend: <U extends FamilyTemplates>(families: KeyFamilySet<U>) => KeySchemaOf<CoreFamilyTemplates & U> | KeyFamilyError
}

type TemplatesOfSets<S extends ReadonlyArray<KeyFamilySet<FamilyTemplates>>> = S extends readonly [
  KeyFamilySet<infer T>,
  ...infer Rest extends ReadonlyArray<KeyFamilySet<FamilyTemplates>>
]
  ? T & TemplatesOfSets<Rest>
  : unknown

const validatePrefix = (prefix: string): KeyPartError | undefined => {
  const problem = checkKeyPart("prefix", prefix)
  if (problem) return problem
  if (prefix.includes(":")) return new KeyPartError("contains-colon", "prefix", "prefix must not contain ':'")
  return undefined
}

type Parts = Readonly<Record<string, string>>
type KeyTokens = ReturnType<typeof tokenize>

/** The key of `family` under `head`, or the first part it refuses. */
const buildKey = (head: string, family: RegisteredFamily, parts: Parts): string | KeyPartError => {
  let out = head
  for (const token of family.tokens) {
    out += token.separator
    if (token.literal !== undefined) {
      out += token.literal
      continue
    }
    const part = token.part!
    const value = parts[part]
    if (typeof value !== "string") return new KeyPartError("empty", part, `${part} is missing`)
    const bad = checkKeyPart(part, value)
    if (bad) return bad
    const rule = family.rules[part]
    if (rule !== undefined && !ruleAccepts(rule, value)) {
      return new KeyPartError("not-allowed", part, ruleRefusal(rule, part, value, family.name))
    }
    out += encodeKeyPartUnchecked(value)
  }
  return out
}

/** The decoded parts when the key's `tokens` are a key of `family`, else `undefined`. */
const matchFamily = (family: RegisteredFamily, tokens: KeyTokens): Parts | undefined => {
  if (family.tokens.length !== tokens.length) return undefined
  const parts: Record<string, string> = {}
  let matches = true
  for (let i = 0; i < tokens.length && matches; i++) {
    const t = family.tokens[i]!
    const k = tokens[i]!
    if (t.separator !== k.separator) matches = false
    else if (t.literal !== undefined) matches = t.literal === k.text
    else if (k.text.length === 0) matches = false
    else {
      const value = decodeKeyPart(k.text)
      // A value its rule refuses was never built by this family (and may be another's).
      matches = ruleAccepts(family.rules[t.part!], value)
      parts[t.part!] = value
    }
  }
  return matches ? parts : undefined
}

const parseKey = (
  head: string,
  families: ReadonlyArray<RegisteredFamily>,
  full: string
): { family: string; parts: Parts } | undefined => {
  if (!full.startsWith(head)) return undefined
  const tokens = tokenize(full.slice(head.length))
  for (const family of families) {
    const parts = matchFamily(family, tokens)
    if (parts !== undefined) return { family: family.name, parts }
  }
  return undefined
}

const schemaOver = (prefix: string, head: string, families: ReadonlyArray<RegisteredFamily>): KeySchemaOf<FamilyTemplates> => {
  const byName = new Map(families.map((family) => [family.name, family]))

  const key = (name: string, parts: Parts): string | KeyPartError => {
    const family = byName.get(name)
    if (family === undefined) return new KeyPartError("not-allowed", "family", `no key family '${name}' in this schema`)
    return buildKey(head, family, parts)
  }

  const globHead = head.replace(/[*?[\]\\]/g, (c) => "\\" + c)
  const pattern = (name: string): string => {
    const family = byName.get(name)
    // Only an untyped caller gets here, and a glob for no family would silently match nothing.
    if (family === undefined) throw new Error(`no key family '${name}' in this schema`)
    return globHead + family.tokens.map((t) => t.separator + (t.literal ?? "*")).join("")
  }

  const parse = (full: string) => parseKey(head, families, full)

  const extend = (set: KeyFamilySet): KeySchemaOf<FamilyTemplates> | KeyFamilyError => {
    const all = registerFamilies(families, set)
    return all instanceof KeyFamilyError ? all : schemaOver(prefix, head, all)
  }

  return { prefix, families, key, pattern, parse, extend } as KeySchemaOf<FamilyTemplates>
}

/** Creates the key schema of one island. Fails when the prefix itself is not acceptable. */
export function makeKeySchema(prefix?: string): KeySchema | KeyPartError
/**
 * Creates the key schema of one island over the core families and `families`, registered in
 * order. Fails when the prefix is not acceptable or a family set is refused.
 */
export function makeKeySchema<const S extends ReadonlyArray<KeyFamilySet<FamilyTemplates>>>(
  prefix: string | undefined,
  options: { readonly families: S }
): KeySchemaOf<CoreFamilyTemplates & TemplatesOfSets<S>> | KeyPartError | KeyFamilyError
export function makeKeySchema(
  prefix: string = DEFAULT_PREFIX,
  options?: { readonly families: ReadonlyArray<KeyFamilySet> }
): unknown {
  const problem = validatePrefix(prefix)
  if (problem) return problem
  let schema: KeySchemaOf<FamilyTemplates> | KeyFamilyError = schemaOver(
    prefix,
    encodeKeyPartUnchecked(prefix) + ":",
    coreRegisteredFamilies
  )
  for (const set of options?.families ?? []) {
    if (schema instanceof KeyFamilyError) break
    schema = schema.extend(set)
  }
  return schema
}

import type { RegisteredFamily } from "./FamilyRegistration.js"
import type { FamilyTemplates } from "./KeyFamilySet.js"
import { KeyPartError, MAX_KEY_PART_BYTES } from "./KeyPart.js"
import type { KeySchema, KeySchemaOf } from "./KeySchema.js"
import { ruleValues } from "./PartRule.js"

/** One (family, parts) pair a law is checked on. */
export interface KeyDraw {
  readonly family: string
  readonly parts: Readonly<Record<string, string>>
}

/** What the laws need of a schema, whatever its families. */
interface LooseSchema {
  readonly families: ReadonlyArray<RegisteredFamily>
  readonly key: (family: string, parts: Readonly<Record<string, string>>) => string | KeyPartError
  readonly parse: (key: string) => KeyDraw | undefined
}

// Separators, escapes and their look-alikes, controls, glob characters, non-ASCII, the longest part.
const tricky: ReadonlyArray<string> = [
  ":", "|", "%", "%3A", "%25", "%7C", "%%", " ", "\t", "\n", "\x00", "\x7f", "*", "?", "[x]", "\\",
  "a:b", "a|b", "é", "日本", "🚀", "x".repeat(MAX_KEY_PART_BYTES)
]

/** Tricky part values plus every literal of the schema's templates (an id that looks like a key). */
const trickyValues = (schema: LooseSchema): ReadonlyArray<string> => {
  const literals = schema.families.flatMap((f) => f.tokens.flatMap((t) => (t.literal === undefined ? [] : [t.literal])))
  return [...new Set([...tricky, ...literals])]
}

/**
 * Draws for every family of `schema`, deterministic: each part walks the tricky values (or its
 * rule's own values), shifted per part so parts of one key differ.
 */
export const trickyDraws = <T extends FamilyTemplates>(schema: KeySchemaOf<T> | KeySchema): ReadonlyArray<KeyDraw> => {
  const loose = schema as unknown as LooseSchema
  const free = trickyValues(loose)
  return loose.families.flatMap((family) => {
    // A ruled part takes its rule's values: registration made sure there is at least one.
    const choices = family.parts.map((part) => {
      const rule = family.rules[part]
      return rule === undefined ? free : ruleValues(rule)
    })
    const count = Math.max(1, ...choices.map((c) => c.length))
    return Array.from({ length: count }, (_, i) => ({
      family: family.name,
      parts: Object.fromEntries(family.parts.map((part, j) => [part, choices[j]![(i + j) % choices[j]!.length]!]))
    }))
  })
}

const describe = (draw: KeyDraw): string => `${draw.family} ${JSON.stringify(draw.parts)}`

/** The draw as the key holds it: only the template's parts, in template order. */
const canonical = (family: RegisteredFamily, draw: KeyDraw): KeyDraw => ({
  family: draw.family,
  parts: Object.fromEntries(family.parts.map((part) => [part, draw.parts[part]!]))
})

/**
 * The laws every key schema keeps, over `draws` (by default {@link trickyDraws}): each draw builds
 * a key, the key parses back to the same family and parts, and no two different draws build the
 * same key. Returns each broken law in words; empty when all hold. An extension checks its own
 * families with `expect(keySchemaLawProblems(schema)).toEqual([])`, and may add random draws.
 */
export const keySchemaLawProblems = <T extends FamilyTemplates>(
  schema: KeySchemaOf<T> | KeySchema,
  draws: Iterable<KeyDraw> = trickyDraws(schema)
): ReadonlyArray<string> => {
  const loose = schema as unknown as LooseSchema
  const byName = new Map(loose.families.map((f) => [f.name, f]))
  const problems: Array<string> = []
  const owners = new Map<string, string>()
  for (const raw of draws) {
    const family = byName.get(raw.family)
    if (family === undefined) {
      problems.push(`draw of unknown family: ${describe(raw)}`)
      continue
    }
    const draw = canonical(family, raw)
    const key = loose.key(draw.family, draw.parts)
    if (key instanceof KeyPartError) {
      problems.push(`no key for ${describe(draw)}: ${key.message}`)
      continue
    }
    const parsed = loose.parse(key)
    const back = parsed === undefined ? undefined : byName.get(parsed.family)
    if (back === undefined || describe(canonical(back, parsed!)) !== describe(draw)) {
      problems.push(`'${key}' built from ${describe(draw)} parses as ${parsed === undefined ? "nothing" : describe(parsed)}`)
    }
    const owner = owners.get(key)
    if (owner === undefined) owners.set(key, describe(draw))
    else if (owner !== describe(draw)) problems.push(`'${key}' is built from both ${owner} and ${describe(draw)}`)
  }
  return problems
}

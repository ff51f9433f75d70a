import { describe, expect, it } from "vitest"
import fc from "fast-check"
import { makeKeySchema, MAX_KEY_PART_BYTES, type RegisteredFamily } from "@microdcs/keyschema"
import { type KeyDraw, keySchemaLawProblems, ruleValues, trickyDraws } from "@microdcs/keyschema/testing"
import { ok, widgetFamilies } from "./SampleFamilies.js"

/** Any well-formed string that is a valid key part, biased towards separators and escapes. */
const keyPart = fc
  .string({
    unit: fc.oneof(
      fc.constantFrom(":", "|", "%", " ", "\t", "\n", "\x7f", "%3A", "list", "ref", "widget", "é", "日", "🚀", "\x00"),
      fc.string({ minLength: 1, maxLength: 1, unit: "grapheme" })
    ),
    minLength: 1,
    maxLength: 12
  })
  .filter((s) => s.length > 0 && Buffer.byteLength(s) <= MAX_KEY_PART_BYTES)

/** Random draws over any family set: a ruled part takes its rule's values, a free part anything. */
const drawOf = (families: ReadonlyArray<RegisteredFamily>): fc.Arbitrary<KeyDraw> =>
  fc.constantFrom(...families).chain((family) =>
    fc
      .tuple(...family.parts.map((part) => (family.rules[part] ? fc.constantFrom(...ruleValues(family.rules[part])) : keyPart)))
      .map((values) => ({ family: family.name, parts: Object.fromEntries(family.parts.map((p, i) => [p, values[i]!])) }))
  )

const schemas = [
  { name: "core families", schema: ok(makeKeySchema("microdcs")) },
  { name: "core and a registered set", schema: ok(makeKeySchema("island|7", { families: [widgetFamilies] })) }
] as const

describe.each(schemas)("key laws over $name", ({ schema }) => {
  it("hold on every family with tricky parts (the check an extension runs)", () => {
    const draws = trickyDraws(schema)
    expect(new Set(draws.map((d) => d.family))).toEqual(new Set(schema.families.map((f) => f.name)))
    expect(keySchemaLawProblems(schema)).toEqual([])
  })

  it("round trip: every random key parses back to its family and parts", () => {
    fc.assert(
      fc.property(drawOf(schema.families), (draw) => {
        expect(keySchemaLawProblems(schema, [draw])).toEqual([])
      }),
      { numRuns: 3000 }
    )
  })

  it("injectivity: no two different random (family, parts) give the same key", () => {
    fc.assert(
      fc.property(drawOf(schema.families), drawOf(schema.families), (a, b) => {
        expect(keySchemaLawProblems(schema, [a, b])).toEqual([])
      }),
      { numRuns: 5000 }
    )
  })
})

describe("the key laws check", () => {
  const schema = ok(makeKeySchema("t", { families: [widgetFamilies] }))

  it("reports a key that parses back wrong", () => {
    const broken: typeof schema = { ...schema, parse: (key) => (key.endsWith(":w1") ? undefined : schema.parse(key)) }
    expect(keySchemaLawProblems(broken, [{ family: "widget", parts: { id: "w1" } }])).toEqual([
      `'t:widget:w1' built from widget {"id":"w1"} parses as nothing`
    ])
  })

  it("reports two draws that share a key", () => {
    // A builder that folds case: two ids, one key.
    const foldCase = (_family: string, parts: Readonly<Record<string, string>>) => schema.key("widget", { id: parts["id"]!.toLowerCase() })
    const broken = { ...schema, key: foldCase } as unknown as typeof schema
    const problems = keySchemaLawProblems(broken, [
      { family: "widget", parts: { id: "A" } },
      { family: "widget", parts: { id: "a" } }
    ])
    expect(problems).toContain(`'t:widget:a' is built from both widget {"id":"A"} and widget {"id":"a"}`)
  })

  it("reports a draw the schema refuses and a family it lacks", () => {
    expect(
      keySchemaLawProblems(schema, [
        { family: "widgetByColor", parts: { scope: "s", color: "blue" } },
        { family: "gizmo", parts: {} }
      ])
    ).toEqual([
      `no key for widgetByColor {"scope":"s","color":"blue"}: color 'blue' is not allowed in widgetByColor: one of red, green`,
      `draw of unknown family: gizmo {}`
    ])
  })
})

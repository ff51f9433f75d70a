import { describe, expect, it } from "vitest"
import fc from "fast-check"
import {
  decodeKeyPart,
  encodeKeyPart,
  encodeKeyPartUnchecked,
  KeyPartError,
  keyFamilies,
  type KeyFamily,
  makeKeySchema,
  MAX_KEY_PART_BYTES,
  MAX_NODE_SEQ,
  nodeSeqPart,
  type KeySchema
} from "@microdcs/keyschema"

const schema = makeKeySchema("microdcs") as KeySchema

const partsOf = (family: KeyFamily): Array<string> =>
  [...keyFamilies[family].matchAll(/\{(\w+)\}/g)].map((m) => m[1]!)

/** Any well-formed string that is a valid key part, biased towards separators and escapes. */
const keyPart = fc
  .string({
    unit: fc.oneof(
      fc.constantFrom(":", "|", "%", " ", "\t", "\n", "\x7f", "%3A", "list", "é", "日", "🚀", "\x00"),
      fc.string({ minLength: 1, maxLength: 1, unit: "grapheme" })
    ),
    minLength: 1,
    maxLength: 12
  })
  .filter((s) => s.length > 0 && Buffer.byteLength(s) <= MAX_KEY_PART_BYTES)

const familyWithParts = fc.constantFrom(...(Object.keys(keyFamilies) as Array<KeyFamily>)).chain((family) =>
  fc
    .tuple(
      ...partsOf(family).map((name) =>
        name === "kind"
          ? fc.constantFrom("equipment", "personnel")
          : name === "seq"
            ? fc.integer({ min: 0, max: MAX_NODE_SEQ }).map((n) => nodeSeqPart(n) as string)
            : keyPart
      )
    )
    .map((values) => ({ family, parts: Object.fromEntries(partsOf(family).map((n, i) => [n, values[i]!])) }))
)

describe("key-part encoding", () => {
  it("escapes separators, %, controls and DEL with upper-case hex, keeps the rest", () => {
    expect(encodeKeyPartUnchecked("a:b|c%d e\x7f\x01")).toBe("a%3Ab%7Cc%25d%20e%7F%01")
    expect(encodeKeyPartUnchecked("Müller-日本")).toBe("Müller-日本")
  })

  it("round-trips any valid part", () => {
    fc.assert(fc.property(keyPart, (part) => decodeKeyPart(encodeKeyPartUnchecked(part)) === part), { numRuns: 2000 })
  })

  it("never lets a separator through", () => {
    fc.assert(fc.property(keyPart, (part) => !/[:|]/.test(encodeKeyPartUnchecked(part))))
  })

  it("rejects empty, oversized and ill-formed parts", () => {
    expect(encodeKeyPart("id", "")).toMatchObject({ problem: "empty" })
    expect(encodeKeyPart("id", "x".repeat(MAX_KEY_PART_BYTES + 1))).toMatchObject({ problem: "too-long" })
    // 171 three-byte characters = 513 bytes: the limit is on bytes, not characters.
    expect(encodeKeyPart("id", "日".repeat(171))).toMatchObject({ problem: "too-long" })
    expect(encodeKeyPart("id", "x".repeat(MAX_KEY_PART_BYTES))).toBe("x".repeat(MAX_KEY_PART_BYTES))
    expect(encodeKeyPart("id", "a\uD800b")).toMatchObject({ problem: "invalid-utf8" })
  })
})

describe("key schema", () => {
  it("builds every family under the prefix", () => {
    expect(schema.key("jobOrder", { id: "jo-1" })).toBe("microdcs:joborder:jo-1")
    expect(schema.key("jobOrderList", { scope: "line-1" })).toBe("microdcs:joborder:list:line-1")
    expect(schema.key("jobResponseByState", { scope: "s", state: "Ended_Completed" })).toBe(
      "microdcs:jobresponse:bystate:s:Ended_Completed"
    )
    expect(schema.key("sfcEvent", { scope: "s", source: "urn:x", id: "e|1" })).toBe("microdcs:sfc:event:s:urn%3Ax|e%7C1")
    expect(schema.key("scopes", {})).toBe("microdcs:scopes")
    expect(schema.key("referenceList", { kind: "equipment", scope: "s" })).toBe("microdcs:ref:equipment:s")
  })

  it("an id that looks like another family cannot address it", () => {
    expect(schema.key("jobOrder", { id: "list:x" })).toBe("microdcs:joborder:list%3Ax")
    expect(schema.key("jobOrder", { id: "list:x" })).not.toBe(schema.key("jobOrderList", { scope: "x" }))
  })

  it("rejects bad parts with the part's name, and unknown reference kinds", () => {
    expect(schema.key("jobOrder", { id: "" })).toBeInstanceOf(KeyPartError)
    expect(schema.key("jobResponseByState", { scope: "s", state: "" })).toMatchObject({ name: "state" })
    expect(schema.key("referenceList", { kind: "robots", scope: "s" })).toMatchObject({ problem: "not-allowed" })
  })

  it("rejects a prefix with ':' or nothing in it", () => {
    expect(makeKeySchema("a:b")).toMatchObject({ problem: "contains-colon" })
    expect(makeKeySchema("")).toMatchObject({ problem: "empty" })
  })

  it("parses every key back to its family and parts", () => {
    fc.assert(
      fc.property(familyWithParts, ({ family, parts }) => {
        const key = schema.key(family, parts as never) as string
        expect(schema.parse(key)).toEqual({ family, parts })
      }),
      { numRuns: 3000 }
    )
  })

  it("no two different (family, parts) give the same key", () => {
    fc.assert(
      fc.property(familyWithParts, familyWithParts, (a, b) => {
        const ka = schema.key(a.family, a.parts as never)
        const kb = schema.key(b.family, b.parts as never)
        const same = a.family === b.family && JSON.stringify(a.parts) === JSON.stringify(b.parts)
        return same === (ka === kb)
      }),
      { numRuns: 5000 }
    )
  })

  it("does not parse keys of another prefix or of no family", () => {
    expect(schema.parse("other:joborder:x")).toBeUndefined()
    expect(schema.parse("microdcs:nothing:x")).toBeUndefined()
    expect(schema.parse("microdcs:joborder:")).toBeUndefined()
  })

  it("gives a SCAN pattern per family", () => {
    expect(schema.pattern("jobOrder")).toBe("microdcs:joborder:*")
    expect(schema.pattern("jobResponseByState")).toBe("microdcs:jobresponse:bystate:*:*")
  })
})

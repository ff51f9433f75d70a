import { describe, expect, it } from "vitest"
import {
  defineKeyFamilies,
  KeyFamilyError,
  type KeyFamilySet,
  KeyPartError,
  keyFamilies,
  makeKeySchema,
  type KeySchema,
  type PartRule
} from "@microdcs/keyschema"
import { ok, widgetFamilies } from "./SampleFamilies.js"

const core = ok(makeKeySchema("p"))
const schema = ok(makeKeySchema("p", { families: [widgetFamilies] }))

/** The refusal of registering `set` on the core schema (after `before`, if given). */
const refusal = (set: KeyFamilySet, ...before: ReadonlyArray<KeyFamilySet>) => {
  const result = makeKeySchema("p", { families: [...before, set] })
  expect(result).toBeInstanceOf(KeyFamilyError)
  return result as KeyFamilyError
}

describe("registered key families", () => {
  it("build, parse and give SCAN patterns like the core ones", () => {
    expect(schema.key("widget", { id: "w:1" })).toBe("p:widget:w%3A1")
    expect(schema.parse("p:widget:w%3A1")).toEqual({ family: "widget", parts: { id: "w:1" } })
    expect(schema.key("widgetByColor", { scope: "line 1", color: "red" })).toBe("p:widget:bycolor:line%201:red")
    expect(schema.parse("p:widget:bycolor:line%201:red")).toEqual({
      family: "widgetByColor",
      parts: { scope: "line 1", color: "red" }
    })
    expect(schema.key("widgetEvent", { source: "urn:a", id: "e|1" })).toBe("p:widget:event:urn%3Aa|e%7C1")
    expect(schema.parse("p:widget:event:urn%3Aa|e%7C1")).toEqual({ family: "widgetEvent", parts: { source: "urn:a", id: "e|1" } })
    expect(schema.pattern("widgetByColor")).toBe("p:widget:bycolor:*:*")
    expect(schema.pattern("widgetEvent")).toBe("p:widget:event:*|*")
    // The core families are unchanged in the extended schema.
    expect(schema.key("jobOrder", { id: "list:x" })).toBe("p:joborder:list%3Ax")
    expect(schema.parse("p:joborder:list:x")).toEqual({ family: "jobOrderList", parts: { scope: "x" } })
    expect(schema.pattern("jobOrder")).toBe("p:joborder:*")
  })

  it("are unknown to a schema they were not registered in", () => {
    expect(core.parse("p:widget:w1")).toBeUndefined()
    expect(core.families.map((f) => f.name)).toEqual(Object.keys(keyFamilies))
    expect(schema.families.map((f) => f.name)).toEqual([...Object.keys(keyFamilies), ...Object.keys(widgetFamilies.templates)])
  })

  it("extend a schema the store already holds, with the same prefix", () => {
    const extended = ok(core.extend(widgetFamilies))
    expect(extended.prefix).toBe("p")
    expect(extended.key("widgetSerial", { n: "42" })).toBe("p:widget:serial:42")
    expect(extended.parse("p:widget:serial:42")).toEqual({ family: "widgetSerial", parts: { n: "42" } })
  })

  it("refuse a part their rule refuses, naming the part and the rule", () => {
    expect(schema.key("widgetByColor", { scope: "s", color: "blue" })).toMatchObject({
      _tag: "KeyPartError",
      problem: "not-allowed",
      name: "color",
      message: "color 'blue' is not allowed in widgetByColor: one of red, green"
    })
    expect(schema.key("widgetSerial", { n: "4x" })).toMatchObject({
      problem: "not-allowed",
      name: "n",
      message: "n '4x' is not allowed in widgetSerial: a decimal number"
    })
    // The parser knows the rule too: no family built this key.
    expect(schema.parse("p:widget:bycolor:s:blue")).toBeUndefined()
    expect(schema.parse("p:widget:serial:4x")).toBeUndefined()
  })

  it("share a shape with a core family when their rules tell them apart", () => {
    expect(schema.key("robotRef", { robotKind: "arm", scope: "s" })).toBe("p:ref:arm:s")
    expect(schema.parse("p:ref:arm:s")).toEqual({ family: "robotRef", parts: { robotKind: "arm", scope: "s" } })
    expect(schema.parse("p:ref:equipment:s")).toEqual({ family: "referenceList", parts: { kind: "equipment", scope: "s" } })
    expect(schema.parse("p:ref:tools:s")).toEqual({ family: "toolRef", parts: { scope: "s" } })
    expect(schema.key("robotRef", { robotKind: "equipment", scope: "s" })).toMatchObject({ problem: "not-allowed" })
  })
})

describe("the reference list kind rule", () => {
  it("is a part rule of referenceList: a bad kind is refused by builder and parser, in every schema", () => {
    for (const s of [core as KeySchema, schema as unknown as KeySchema]) {
      expect(s.key("referenceList", { kind: "robots", scope: "s" })).toMatchObject({
        problem: "not-allowed",
        name: "kind",
        message: "kind 'robots' is not allowed in referenceList: one of equipment, materialclass, materialdefinition, personnel, physicalasset"
      })
      expect(s.key("referenceList", { kind: "personnel", scope: "s" })).toBe("p:ref:personnel:s")
      expect(s.parse("p:ref:robots:s")).toBeUndefined()
    }
    expect(core.families.find((f) => f.name === "referenceList")?.rules).toEqual({
      kind: { oneOf: ["equipment", "materialclass", "materialdefinition", "personnel", "physicalasset"] }
    })
  })
})

describe("registration refuses", () => {
  it("a family name that is already registered", () => {
    expect(refusal(defineKeyFamilies({ jobOrder: "gadget:{id}" }))).toMatchObject({
      problem: "name-taken",
      family: "jobOrder",
      message: "a key family 'jobOrder' is already registered ('joborder:{id}')"
    })
    expect(refusal(defineKeyFamilies({ widget: "gadget:{id}" }), widgetFamilies)).toMatchObject({ problem: "name-taken", other: "widget" })
  })

  it("a template that could give a key another family gives", () => {
    // A free part where the core has a literal, or the other way round.
    expect(refusal(defineKeyFamilies({ gadget: "joborder:{gadgetId}" }))).toMatchObject({
      problem: "ambiguous",
      family: "gadget",
      other: "jobOrder",
      message: "template 'joborder:{gadgetId}' of gadget can give the same key as 'joborder:{id}' of jobOrder; give it a literal of its own"
    })
    expect(refusal(defineKeyFamilies({ orderNotes: "joborder:notes" }))).toMatchObject({ problem: "ambiguous", other: "jobOrder" })
    expect(refusal(defineKeyFamilies({ anyList: "{what}:list:{scope}" }))).toMatchObject({ problem: "ambiguous", other: "jobOrderList" })
    // A literal the core's ruled part accepts, or a ruled part whose values overlap.
    expect(refusal(defineKeyFamilies({ equipmentRef: "ref:equipment:{scope}" }))).toMatchObject({ other: "referenceList" })
    expect(
      refusal(defineKeyFamilies({ moreRefs: { template: "ref:{k}:{scope}", parts: { k: { oneOf: ["arm", "personnel"] } } } }))
    ).toMatchObject({ problem: "ambiguous", other: "referenceList" })
    // Against an earlier registered set, and inside one set.
    expect(refusal(defineKeyFamilies({ gadget: "widget:{serial}" }), widgetFamilies)).toMatchObject({ other: "widget" })
    expect(refusal(defineKeyFamilies({ a: "gadget:{x}", b: "gadget:{y}" }))).toMatchObject({ family: "b", other: "a" })
    // Two open tests at one place cannot be proven apart.
    const digits = { accepts: (v: string) => /^[0-9]+$/.test(v), examples: ["1"] } as const
    const letters = { accepts: (v: string) => /^[a-z]+$/.test(v), examples: ["a"] } as const
    expect(
      refusal(defineKeyFamilies({ byNumber: { template: "gadget:{n}", parts: { n: digits } }, byName: { template: "gadget:{s}", parts: { s: letters } } }))
    ).toMatchObject({ problem: "ambiguous" })
  })

  it("templates and names that are no template or name", () => {
    const bad = (template: string) => refusal(defineKeyFamilies({ gadget: template }))
    expect(bad("")).toMatchObject({ problem: "bad-template", family: "gadget" })
    expect(bad("gadget::{id}")).toMatchObject({ problem: "bad-template" })
    expect(bad("gadget:{id}:")).toMatchObject({ problem: "bad-template" })
    expect(bad("gadget:x{id}")).toMatchObject({ problem: "bad-template" })
    expect(bad("gad*get:{id}")).toMatchObject({ problem: "bad-template" })
    expect(bad("gadget:{id}:{id}")).toMatchObject({ problem: "bad-template", message: "template 'gadget:{id}:{id}' of gadget: part {id} appears twice" })
    expect(refusal(defineKeyFamilies({ "gadget:x": "gadget:{id}" }))).toMatchObject({ problem: "bad-name" })
  })

  it("rules for parts the template lacks, and rules without a valid value", () => {
    // @ts-expect-error a rule may only name a part of its own template
    const misnamed = defineKeyFamilies({ gadget: { template: "gadget:{id}", parts: { idd: { oneOf: ["a"] } } } })
    expect(refusal(misnamed)).toMatchObject({
      problem: "bad-rule",
      message: "gadget has a rule for {idd}, which its template 'gadget:{id}' lacks"
    })
    const ruled = (rule: PartRule) => refusal(defineKeyFamilies({ gadget: { template: "gadget:{id}", parts: { id: rule } } }))
    expect(ruled({ oneOf: [] })).toMatchObject({ problem: "bad-rule", message: "gadget: the rule of {id} names no value" })
    expect(ruled({ oneOf: ["a:b", ""] })).toMatchObject({
      problem: "bad-rule",
      message: "gadget: the rule of {id} names '': id must not be empty"
    })
    expect(ruled({ accepts: () => false, examples: ["1"] })).toMatchObject({
      problem: "bad-rule",
      message: "gadget: the rule of {id} refuses its own example '1'"
    })
  })

  it("and changes nothing: the schema it was offered to works as before", () => {
    const before = ok(core.extend(widgetFamilies))
    const refused = before.extend(defineKeyFamilies({ gizmo: "gizmo:{id}", gadget: "widget:{serial}" }))
    expect(refused).toBeInstanceOf(KeyFamilyError)
    expect(before.families).toHaveLength(Object.keys(keyFamilies).length + Object.keys(widgetFamilies.templates).length)
    expect(before.parse("p:gizmo:g1")).toBeUndefined()
    expect(before.key("widget", { id: "w1" })).toBe("p:widget:w1")
    // A bad prefix is still refused first, as a KeyPartError.
    expect(makeKeySchema("a:b", { families: [widgetFamilies] })).toBeInstanceOf(KeyPartError)
  })
})

/** Compiled by `pnpm typecheck`, never run: the types of registered families. */
export const typeChecks = () => {
  schema.key("widgetByColor", { scope: "s", color: "red" })
  // @ts-expect-error a registered family's parts are checked by name
  schema.key("widget", { wrong: "x" })
  // @ts-expect-error and none may be missing
  schema.key("widgetByColor", { scope: "s" })
  // @ts-expect-error a family no set registered
  schema.key("gizmo", { id: "x" })
  // @ts-expect-error the core schema does not know an extension's families
  core.key("widget", { id: "x" })
  schema.key("jobResponseByState", { scope: "s", state: "Running" })
  const parsed = schema.parse("p:widget:bycolor:s:red")
  // Checking the family narrows the parts, no cast needed.
  const color: string | undefined = parsed?.family === "widgetByColor" ? parsed.parts.color : undefined
  const extended = core.extend(widgetFamilies)
  const serial = extended instanceof KeyFamilyError ? undefined : extended.key("widgetSerial", { n: "1" })
  return [color, serial]
}

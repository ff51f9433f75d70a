import { describe, expect, it } from "@effect/vitest"
import { eventConditions } from "@microdcs/sfc"

const TORQUE = "com.example.station.torque.v1"

/** The recipe condition language on an event: the language of a journal counter's `when`. */
describe("conditions on an event", () => {
  it("read the event's data first, then its attributes; a bad condition is a problem with its position", () => {
    const compiled = eventConditions.compile(`!torque_ok && type == '${TORQUE}'`)
    if (!("predicate" in compiled)) throw new Error(compiled.problem)
    expect(compiled.predicate({ type: TORQUE, data: { torque_ok: false } })).toBe(true)
    expect(compiled.predicate({ type: TORQUE, data: { torque_ok: true } })).toBe(false)
    expect(compiled.predicate({ type: "other", data: { torque_ok: false } })).toBe(false)
    const dotted = eventConditions.compile("data.torque_nm < 80")
    if (!("predicate" in dotted)) throw new Error(dotted.problem)
    expect(dotted.predicate({ data: { torque_nm: 78 } })).toBe(true)
    const bad = eventConditions.compile("torque_ok &&")
    expect("problem" in bad && bad.problem).toMatch(/at character \d+/)
  })

  it("never throw on what an event carries", () => {
    const compiled = eventConditions.compile("result == 'NOK'")
    if (!("predicate" in compiled)) throw new Error(compiled.problem)
    for (const event of [null, undefined, 7, "x", [], { data: null }, { data: [1] }, Object.create(null)]) expect(compiled.predicate(event)).toBe(false)
    expect(compiled.predicate({ data: { result: "NOK" } })).toBe(true)
  })
})

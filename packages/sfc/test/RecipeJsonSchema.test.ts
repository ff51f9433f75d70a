import { readFileSync, writeFileSync } from "node:fs"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { Ajv2020 } from "ajv/dist/2020.js"
import fc from "fast-check"
import { decodeRecipe, RECIPE_SCHEMA_ID, recipeJsonSchema } from "@microdcs/sfc"

/**
 * The published recipe schema is the generated one (rewrite it with `UPDATE_SCHEMAS=1`), valid
 * JSON Schema 2020-12, and it accepts exactly what the recipe decoder accepts.
 */

const published = new URL("../../../docs/schemas/sfc-recipe/v1.0.0/schema.json", import.meta.url)
const workMasters = ["../../../apps/island-daemon/fixtures/work-master-axle.json", "../../../apps/island-daemon/fixtures/work-master-axle-toolcheck.json", "../../test-utils/fixtures/work-master-axle.json"]

const generated = recipeJsonSchema()
const ajv = new Ajv2020({ strict: true, allErrors: true })
const schemaAccepts = ajv.compile(generated)
const decoderAccepts = (value: unknown) => Result.isSuccess(decodeRecipe(value))

describe("the published recipe JSON Schema", () => {
  it("is the one generated from the recipe model, under the id work masters name", () => {
    if (process.env["UPDATE_SCHEMAS"] !== undefined) writeFileSync(published, `${JSON.stringify(generated, null, 2)}\n`)
    expect(JSON.parse(readFileSync(published, "utf8"))).toEqual(generated)
    expect(generated["$id"]).toBe(RECIPE_SCHEMA_ID)
  })

  it("accepts every recipe the repository's work masters carry", () => {
    for (const file of workMasters) {
      const workMaster = JSON.parse(readFileSync(new URL(file, import.meta.url), "utf8"))
      expect(workMaster.dataschema).toBe(RECIPE_SCHEMA_ID)
      expect(schemaAccepts(workMaster.data), `${file}: ${ajv.errorsText(schemaAccepts.errors)}`).toBe(true)
      expect(decoderAccepts(workMaster.data)).toBe(true)
    }
  })

  it("refuses what the decoder refuses, and only that", () => {
    const step = { Name: "A", Initial: true }
    const transition = { Source: "A", Target: "A", Condition: "true" }
    const action = { Name: "a", Step: "A", Qualifier: "N", Interaction: "push_command", TypeId: "t", TimeoutSeconds: 5 }
    const recipe = { Steps: [step], Transitions: [transition], Actions: [action] }
    const refused = [
      {},
      { ...recipe, Steps: "A" },
      { ...recipe, Steps: [{ Name: "" }] },
      { ...recipe, Steps: [{ Name: "A", Initial: null }] },
      { ...recipe, Transitions: [{ ...transition, Priority: 1.5 }] },
      { ...recipe, Transitions: [{ ...transition, Priority: null }] },
      { ...recipe, Actions: [{ ...action, Qualifier: "X" }] },
      { ...recipe, Actions: [{ ...action, Interaction: "call" }] },
      { ...recipe, Actions: [{ ...action, TimeoutSeconds: 0 }] },
      { ...recipe, Branches: [{ Name: "B", Type: "parallel", Branches: [["A"]] }] }
    ]
    expect(schemaAccepts(recipe) && decoderAccepts(recipe)).toBe(true)
    for (const value of refused) expect([schemaAccepts(value), decoderAccepts(value)], JSON.stringify(value)).toEqual([false, false])
  })

  it("agrees with the decoder on generated recipes, good and bad (seeded)", () => {
    const anyValue = fc.constantFrom<unknown>(null, "", "A", "N", "P", "push_command", "pull_event", "selection", "simultaneous", 0, -1, 1, 2.5, true, [], {}, ["A"], [["A"]])
    const field = (good: fc.Arbitrary<unknown>) => fc.oneof({ weight: 4, arbitrary: good }, { weight: 1, arbitrary: anyValue })
    const element = (fields: Record<string, fc.Arbitrary<unknown>>) => fc.record(Object.fromEntries(Object.entries(fields).map(([k, good]) => [k, field(good)])), { requiredKeys: [] })
    const name = fc.constantFrom("A", "B", "C")
    const recipe = fc.record(
      {
        Steps: field(fc.array(element({ Name: name, Initial: fc.boolean() }), { maxLength: 3 })),
        Transitions: field(fc.array(element({ Source: name, Target: name, Condition: fc.constant("true"), Priority: fc.integer({ min: -3, max: 3 }) }), { maxLength: 3 })),
        Actions: field(
          fc.array(
            element({
              Name: name,
              Step: name,
              Qualifier: fc.constantFrom("N", "P"),
              Interaction: fc.constantFrom("push_command", "pull_event"),
              TypeId: fc.constant("t"),
              TimeoutSeconds: fc.double({ min: 0.5, max: 60, noNaN: true }),
              Parameters: fc.constant({ slot: 3 })
            }),
            { maxLength: 3 }
          )
        ),
        Branches: field(fc.array(element({ Name: name, Type: fc.constantFrom("selection", "simultaneous"), Branches: fc.constant([["A"], ["B"]]) }), { maxLength: 2 }))
      },
      { requiredKeys: [] }
    )
    fc.assert(
      fc.property(recipe, (value) => {
        expect(schemaAccepts(value), JSON.stringify(value)).toBe(decoderAccepts(value))
      }),
      { seed: 2312, numRuns: 500 }
    )
  })
})

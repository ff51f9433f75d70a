import { describe, expect, it } from "vitest"
import { Result } from "effect"
import { Ajv2020 } from "ajv/dist/2020.js"
import {
  type RecipeProblem,
  recipeJsonSchema,
  RECIPE_SCHEMA_ID,
  RECIPE_SCHEMA_ID_V1_1,
  validateRecipe,
  validateWorkMasterRecipe
} from "@microdcs/sfc"
import { parseMatches, placeOf } from "../src/recipe/correlationKey.js"
import { recipeBuilders } from "../src/testing.js"

// The correlation key of a pull event (recipe schema v1.1.0): the model, its rules and its JSON Schema.

const { pull, push, linearJson } = recipeBuilders("")

const keyed = (extra: Record<string, unknown>) => pull("scan", "Load", { TypeId: "com.example.scan", ...extra })
/** `version` null: the recipe names none (what a v1.0.0 work master's data is). */
const recipe = (actions: ReadonlyArray<object>, version: string | null = "1.1.0") =>
  ({ ...linearJson(["Load"], actions), ...(version !== null ? { SchemaVersion: version } : {}) })

const problemsOf = (input: unknown): ReadonlyArray<Pick<RecipeProblem, "rule" | "path" | "message">> => {
  const result = validateRecipe(input)
  if (Result.isSuccess(result)) throw new Error("expected problems")
  return result.failure
}

describe("correlation key: model and rules", () => {
  it("accepts an attribute key, a data field key and every Matches form in a v1.1.0 recipe, snake_case too", () => {
    const actions = [
      keyed({ CorrelationKey: { Attribute: "lotid" }, Matches: "order.MaterialRequirements.0.MaterialLotID" }),
      pull("other", "Load", { CorrelationKey: { DataField: "carrier.id" }, Matches: "parameter.Carrier ID" }),
      pull("third", "Load", { correlation_key: { data_field: "items.0" }, matches: "jobid" })
    ]
    const valid = Result.getOrThrow(validateRecipe(recipe(actions)))
    expect(valid.SchemaVersion).toBe("1.1.0")
    expect(valid.Actions.map((a) => [a.CorrelationKey, a.Matches])).toEqual([
      [{ Attribute: "lotid" }, "order.MaterialRequirements.0.MaterialLotID"],
      [{ DataField: "carrier.id" }, "parameter.Carrier ID"],
      [{ DataField: "items.0" }, "jobid"]
    ])
  })

  it("refuses both fields in a v1.0.0 recipe (or one that names no version) under needs-v1.1", () => {
    for (const version of ["1.0.0", null]) {
      const problems = problemsOf(recipe([keyed({ CorrelationKey: { Attribute: "lotid" }, Matches: "jobid" })], version))
      expect(problems).toEqual([
        { rule: "needs-v1.1", path: ["Actions", 0, "CorrelationKey"], message: 'action "scan": CorrelationKey needs recipe schema v1.1.0' },
        { rule: "needs-v1.1", path: ["Actions", 0, "Matches"], message: 'action "scan": Matches needs recipe schema v1.1.0' }
      ])
    }
  })

  it("lists every problem of every action's key at once", () => {
    const problems = problemsOf(
      recipe([
        keyed({ CorrelationKey: { Attribute: "LotID" }, Matches: "order" }),
        pull("both", "Load", { CorrelationKey: { Attribute: "lotid", DataField: "lot" }, Matches: "jobid" }),
        pull("neither", "Load", { CorrelationKey: {}, Matches: "jobid" }),
        pull("unfit", "Load", { CorrelationKey: { Attribute: "id" }, Matches: "jobid" }),
        pull("replies", "Load", { CorrelationKey: { Attribute: "correlationid" }, Matches: "jobid" }),
        pull("path", "Load", { CorrelationKey: { DataField: "lot..id" }, Matches: "order.a..b" }),
        pull("deep", "Load", { CorrelationKey: { DataField: Array.from({ length: 17 }, () => "a").join(".") }, Matches: "parameter." }),
        pull("lonely", "Load", { Matches: "jobid" }),
        pull("open", "Load", { CorrelationKey: { Attribute: "lotid" } }),
        push("cmd", "Load", { CorrelationKey: { Attribute: "lotid" }, Matches: "jobid" })
      ])
    )
    expect(problems.every((p) => p.rule === "correlation-key")).toBe(true)
    expect(problems.map((p) => [p.path.join("."), p.message])).toEqual([
      ["Actions.0.CorrelationKey.Attribute", 'action "scan": Attribute "LotID" is not a CloudEvent attribute name (lower-case letters and digits, at most 20)'],
      ["Actions.0.Matches", 'action "scan": Matches "order" is not jobid, order.<field path> (at most 16 parts, none empty) or parameter.<ID>'],
      ["Actions.1.CorrelationKey", 'action "both": CorrelationKey names Attribute and DataField; give one of them'],
      ["Actions.2.CorrelationKey", `action "neither": CorrelationKey needs Attribute (a CloudEvent attribute) or DataField (a dot path in the event's data)`],
      ["Actions.3.CorrelationKey.Attribute", 'action "unfit": Attribute id is the same for every event of the type or new for each one, so it cannot pick a job'],
      ["Actions.4.CorrelationKey.Attribute", 'action "replies": Attribute correlationid routes replies to push commands; name another attribute'],
      ["Actions.5.CorrelationKey.DataField", 'action "path": DataField "lot..id" is not a dot path of field names or indexes (no empty part, no spaces)'],
      ["Actions.5.Matches", 'action "path": Matches "order.a..b" is not jobid, order.<field path> (at most 16 parts, none empty) or parameter.<ID>'],
      ["Actions.6.CorrelationKey.DataField", `action "deep": DataField "${Array.from({ length: 17 }, () => "a").join(".")}" has 17 parts; at most 16`],
      ["Actions.6.Matches", 'action "deep": Matches "parameter." is not jobid, order.<field path> (at most 16 parts, none empty) or parameter.<ID>'],
      ["Actions.7.CorrelationKey", 'action "lonely": Matches needs a CorrelationKey saying where the event carries its key'],
      ["Actions.8.Matches", 'action "open": CorrelationKey needs Matches saying what the key must equal (jobid, order.<field path> or parameter.<ID>)'],
      ["Actions.9.CorrelationKey", `action "cmd": a correlation key is for pull_event actions; a push_command's reply finds its job by its correlation id`]
    ])
  })

  it("takes the version from the work master's dataschema; a recipe that names another is refused", () => {
    const { SchemaVersion: _named, ...data } = recipe([keyed({ CorrelationKey: { Attribute: "lotid" }, Matches: "jobid" })], "1.1.0")
    const v1_1 = validateWorkMasterRecipe({ ID: "wm", dataschema: RECIPE_SCHEMA_ID_V1_1, data })
    expect(Result.getOrThrow(v1_1!).SchemaVersion).toBe("1.1.0")
    const named = validateWorkMasterRecipe({ ID: "wm", dataschema: RECIPE_SCHEMA_ID_V1_1, data: { ...data, SchemaVersion: "1.0.0" } })!
    expect(Result.isFailure(named) && named.failure.map((p) => p.rule)).toEqual(["structure"])
    const v1_0 = validateWorkMasterRecipe({ ID: "wm", dataschema: RECIPE_SCHEMA_ID, data })!
    expect(Result.isFailure(v1_0) && v1_0.failure.map((p) => p.rule)).toEqual(["needs-v1.1", "needs-v1.1"])
  })

  it("still judges the keys when the recipe's shape is wrong elsewhere", () => {
    const input = { ...recipe([keyed({ CorrelationKey: { Attribute: "Lot" }, Matches: "jobid" })]), Steps: "Load" }
    expect(problemsOf(input).map((p) => p.rule)).toEqual(["structure", "correlation-key"])
  })

  it("names the place of a key in one word and parses what it matches", () => {
    expect(placeOf({ Attribute: "lotid" })).toBe("attribute.lotid")
    expect(placeOf({ DataField: "lot.id" })).toBe("data.lot.id")
    expect(parseMatches("jobid")).toEqual({ _tag: "JobId" })
    expect(parseMatches("order.MaterialRequirements.0.MaterialLotID")).toEqual({ _tag: "OrderField", path: ["MaterialRequirements", "0", "MaterialLotID"] })
    expect(parseMatches("parameter.Lot.No")).toEqual({ _tag: "Parameter", id: "Lot.No" })
    for (const bad of ["", "job", "jobid.x", "order.", "order. x", "parameter."]) expect(parseMatches(bad), bad).toBeUndefined()
  })
})

describe("correlation key: the v1.1.0 JSON Schema", () => {
  const ajv = new Ajv2020({ strict: true, allErrors: true })
  const v1_1 = recipeJsonSchema("1.1.0")
  const accepts = ajv.compile(v1_1)

  it("is generated from the model under the v1.1.0 id and describes both key forms; v1.0.0 names no key", () => {
    expect(v1_1["$id"]).toBe(RECIPE_SCHEMA_ID_V1_1)
    const action = JSON.stringify((v1_1["$defs"] as Record<string, unknown>)["Action"])
    expect(action).toContain("CorrelationKey")
    expect(action).toContain("Matches")
    expect(JSON.stringify(recipeJsonSchema())).not.toContain("CorrelationKey")
  })

  it("accepts well-formed keys and refuses malformed ones, as the decoder does", () => {
    const good = recipe([keyed({ CorrelationKey: { Attribute: "lotid" }, Matches: "order.MaterialRequirements.0.MaterialLotID" })], null)
    expect(accepts(good), ajv.errorsText(accepts.errors)).toBe(true)
    const bad = [
      { CorrelationKey: { Attribute: "Lot ID" }, Matches: "jobid" },
      { CorrelationKey: { DataField: "a..b" }, Matches: "jobid" },
      { CorrelationKey: {}, Matches: "jobid" },
      { CorrelationKey: { Attribute: "lotid" }, Matches: "batch" }
    ]
    for (const extra of bad) expect(accepts(recipe([keyed(extra)], null)), JSON.stringify(extra)).toBe(false)
  })
})

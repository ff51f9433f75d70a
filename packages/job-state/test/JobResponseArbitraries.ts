import fc from "fast-check"
import { allJobStates, normalizedName, toStoredState } from "@microdcs/job-state"

/** Values that break a field of either form: wrong types, empty shapes, near misses. */
export const anyValue = fc.constantFrom<unknown>(null, "", "x", "Ended_Completed", "2025-13-01T00:00:00Z", "2025-05-01 08:00:00", 0, -1, 2.5, true, [], {}, ["x"], [{}], { Text: 1 })

export const dateTime = fc.date({ min: new Date(0), max: new Date(4_102_444_800_000), noInvalidDate: true }).map((d) => d.toISOString())

export const stateName = fc.constantFrom(...allJobStates.map(normalizedName))

export const storedState = fc.constantFrom(...allJobStates.map(toStoredState))

const entry = (Text: string, StateNumber: number, Locale = "en") => ({ StateText: { Text, Locale }, StateNumber })

/** State lists that are no job state: numbers that do not match, a substate missing or too many, another locale. */
export const brokenState = fc.constantFrom<unknown>(
  [entry("Ended", 5)],
  [entry("Ended", 4), entry("Completed", 1)],
  [entry("Ended", 5), entry("Held", 1)],
  [entry("Running", 3), entry("Completed", 1)],
  [entry("Aborted", 6, "de")],
  [entry("Aborted", 6), entry("Aborted", 6), entry("Aborted", 6)],
  []
)

/** The result data of a recipe: any JSON by action name. */
export const resultData = fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 })

/** A job response in the old form, as the engine wrote it. */
export const v1Document = fc.record(
  { ID: fc.string(), JobOrderID: fc.string(), StartTime: dateTime, EndTime: dateTime, JobState: stateName, Data: resultData, Error: fc.string() },
  { requiredKeys: ["ID", "JobOrderID", "StartTime", "EndTime", "JobState", "Data"] }
)

const text = fc.record({ Text: fc.string({ maxLength: 6 }), Locale: fc.constantFrom("en", "de") }, { requiredKeys: ["Text"] })
const descriptions = fc.oneof(text, fc.array(text, { maxLength: 2 }))
const id = fc.string({ maxLength: 6 })

/** A resource entry: its id fields (the first required or not) and the optional fields of its type. */
const resource = (ids: ReadonlyArray<string>, use: string, required: boolean) =>
  fc.array(
    fc.record(
      {
        ...Object.fromEntries(ids.map((name) => [name, id])),
        [use]: id,
        Description: descriptions,
        Quantity: fc.constantFrom("1", "2.5"),
        EngineeringUnits: fc.constant({ UnitId: 4408652, DisplayName: { Text: "kg" } })
      },
      { requiredKeys: required ? [ids[0]!] : [] }
    ),
    { maxLength: 2 }
  )

const parameter = fc.record(
  { ID: id, Value: fc.jsonValue({ maxDepth: 1 }), Description: descriptions, Subparameters: fc.constant([{ ID: "sub", Value: 1 }]) },
  { requiredKeys: ["ID", "Value"] }
)

/** A job response in the new form. */
export const v2Document = fc.record(
  {
    JobResponseID: id,
    Description: text,
    JobOrderID: id,
    StartTime: dateTime,
    EndTime: dateTime,
    JobState: storedState,
    JobResponseData: fc.array(parameter, { maxLength: 3 }),
    PersonnelActuals: resource(["ID"], "PersonnelUse", true),
    EquipmentActuals: resource(["ID"], "EquipmentUse", true),
    PhysicalAssetActuals: resource(["ID"], "PhysicalAssetUse", true),
    MaterialActuals: resource(["MaterialClassID", "MaterialDefinitionID", "MaterialLotID", "MaterialSublotID"], "MaterialUse", false)
  },
  { requiredKeys: ["JobResponseID", "JobOrderID", "StartTime", "EndTime", "JobState", "JobResponseData", "PersonnelActuals", "EquipmentActuals", "PhysicalAssetActuals", "MaterialActuals"] }
)

type Path = ReadonlyArray<string | number>

const pathsOf = (value: unknown, at: Path = []): ReadonlyArray<Path> => {
  if (typeof value !== "object" || value === null) return []
  const inner = Object.entries(value).flatMap(([key, v]) => {
    const here = [...at, Array.isArray(value) ? Number(key) : key]
    return [here, ...pathsOf(v, here)]
  })
  return inner
}

/** `doc` with the value at `path` replaced (or removed when `value` is undefined); a fresh copy, `doc` is left alone. */
const changedAt = (doc: unknown, path: Path, value: unknown): unknown => {
  const copy = structuredClone(doc) as Record<string | number, unknown>
  let parent = copy
  for (const part of path.slice(0, -1)) parent = parent[part] as Record<string | number, unknown>
  const last = path[path.length - 1]!
  if (value !== undefined) parent[last] = value
  else if (Array.isArray(parent)) parent.splice(last as number, 1)
  else delete parent[last]
  return copy
}

/** Documents of `good`, half of them with one field, anywhere inside, replaced by a value that may break it or removed. */
export const withOneChange = (good: fc.Arbitrary<unknown>) =>
  fc.oneof(
    good,
    fc.record({ doc: good, where: fc.nat(), value: fc.option(anyValue, { nil: undefined }) }).map(({ doc, where, value }) => {
      const paths = pathsOf(doc)
      return paths.length === 0 ? doc : changedAt(doc, paths[where % paths.length]!, value)
    })
  )

/** Job responses in the new form: valid, with one change, or with a state list that is no job state. */
export const v2Candidate = fc.oneof(
  withOneChange(v2Document),
  fc.tuple(v2Document, brokenState).map(([doc, JobState]) => ({ ...doc, JobState }))
)

/** Job responses in the old form, valid or with one change. */
export const v1Candidate = withOneChange(v1Document)

import { Result, Schema } from "effect"
import { allJobStates, fromStoredState, normalizedName, type StateName, toStoredState } from "./JobState.js"

/** The `dataschema` of a job response as the island stores and publishes it (OPC 10031-4 ISA95JobResponseDataType). */
export const JOB_RESPONSE_SCHEMA_ID = "https://aschamberger.github.io/schemas/microdcs/job-response/v2.0.0/"

/** The `dataschema` of the form the island wrote before (read for one release, never written). */
export const JOB_RESPONSE_V1_SCHEMA_ID = "https://aschamberger.github.io/schemas/microdcs/job-response/v1.0.0/"

// RFC 3339 with an upper-case `T` and a zone: what `Date.prototype.toISOString` writes, and what OPC UA JSON carries.
const DATE_TIME = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/u

export const DateTime = Schema.String.check(Schema.isPattern(DATE_TIME, { expected: "an RFC 3339 date-time such as 2025-05-01T08:00:00.000Z" })).annotate({
  identifier: "DateTime"
})

/** An OPC UA LocalizedText in JSON. */
export const LocalizedText = Schema.Struct({ Text: Schema.String, Locale: Schema.optionalKey(Schema.String) }).annotate({ identifier: "LocalizedText" })
export type LocalizedText = typeof LocalizedText.Type

/** The description of an ISA-95 element: OPC UA declares a list of texts; a single text is taken too. */
const Descriptions = Schema.Union([LocalizedText, Schema.Array(LocalizedText)]).annotate({ identifier: "Descriptions" })

/** An OPC UA EUInformation in JSON (`NamespaceUri`, `UnitId`, `DisplayName`, `Description`), taken as it comes. */
const EngineeringUnits = Schema.Record(Schema.String, Schema.Unknown).annotate({ identifier: "EUInformation" })

/** One entry of a stored state list (ISA95StateDataType): the text in English and its number. */
export const StateEntry = Schema.Struct({
  StateText: Schema.Struct({ Text: Schema.String, Locale: Schema.Literal("en") }),
  StateNumber: Schema.Int
}).annotate({ identifier: "ISA95StateDataType" })

const entryPattern = (text: string, number: number) => ({
  type: "object",
  properties: { StateText: { type: "object", properties: { Text: { const: text } } }, StateNumber: { const: number } }
})

/** Every state list `toStoredState` writes, as JSON Schema: one alternative per main state, its substates inside. */
const stateAlternatives = () => {
  const byMain = new Map<string, Array<ReturnType<typeof toStoredState>>>()
  for (const state of allJobStates) byMain.set(state.main, [...(byMain.get(state.main) ?? []), toStoredState(state)])
  return [...byMain.values()].map((lists) => {
    const main = lists[0]![0]
    const head = entryPattern(main.StateText.Text, main.StateNumber)
    const subs = lists.flatMap((list) => (list[1] === undefined ? [] : [entryPattern(list[1].StateText.Text, list[1].StateNumber)]))
    return subs.length === 0 ? { prefixItems: [head], minItems: 1, maxItems: 1 } : { prefixItems: [head, { anyOf: subs }], minItems: 2, maxItems: 2 }
  })
}

/** A job state as stored (main state, then substate): exactly what `toStoredState` writes, as `fromStoredState` reads it. */
export const StoredJobState = Schema.Array(StateEntry)
  .check(
    Schema.makeFilter((list: ReadonlyArray<unknown>) => Result.match(fromStoredState(list), { onSuccess: () => undefined, onFailure: (e) => e.reason }), {
      expected: "a job state: the main state, then its substate",
      toJsonSchema: () => ({ anyOf: stateAlternatives() })
    })
  )
  .annotate({ identifier: "JobState" })

/** ISA95ParameterDataType: a named value, here one entry of the recipe's result data. */
export interface Parameter {
  readonly ID: string
  readonly Value: unknown
  readonly Description?: typeof Descriptions.Type
  readonly EngineeringUnits?: typeof EngineeringUnits.Type
  readonly Subparameters?: ReadonlyArray<Parameter>
}

export const Parameter: Schema.Codec<Parameter> = Schema.Struct({
  ID: Schema.String,
  Value: Schema.Unknown,
  Description: Schema.optionalKey(Descriptions),
  EngineeringUnits: Schema.optionalKey(EngineeringUnits),
  Subparameters: Schema.optionalKey(Schema.Array(Schema.suspend((): Schema.Codec<Parameter> => Parameter)))
}).annotate({ identifier: "ISA95ParameterDataType" })

const optionalText = Schema.optionalKey(Schema.String)

/** What every resource of a job order carries besides its id: a description, how much of it, in which unit. */
const aboutResource = {
  Description: Schema.optionalKey(Descriptions),
  Quantity: optionalText,
  EngineeringUnits: Schema.optionalKey(EngineeringUnits)
}

export const Personnel = Schema.Struct({ ID: Schema.String, PersonnelUse: optionalText, ...aboutResource }).annotate({ identifier: "ISA95PersonnelDataType" })
export const Equipment = Schema.Struct({ ID: Schema.String, EquipmentUse: optionalText, ...aboutResource }).annotate({ identifier: "ISA95EquipmentDataType" })
export const PhysicalAsset = Schema.Struct({ ID: Schema.String, PhysicalAssetUse: optionalText, ...aboutResource }).annotate({
  identifier: "ISA95PhysicalAssetDataType"
})
export const Material = Schema.Struct({
  MaterialClassID: optionalText,
  MaterialDefinitionID: optionalText,
  MaterialLotID: optionalText,
  MaterialSublotID: optionalText,
  MaterialUse: optionalText,
  ...aboutResource
}).annotate({ identifier: "ISA95MaterialDataType" })

/**
 * A job response (OPC 10031-4 ISA95JobResponseDataType) in JSON: what the engine stores for a
 * finished job and what every reader hands on.
 */
export const JobResponse = Schema.Struct({
  JobResponseID: Schema.String,
  /** Present when the job failed: the engine's reason. */
  Description: Schema.optionalKey(LocalizedText),
  JobOrderID: Schema.String,
  StartTime: DateTime,
  EndTime: DateTime,
  JobState: StoredJobState,
  JobResponseData: Schema.Array(Parameter),
  PersonnelActuals: Schema.Array(Personnel),
  EquipmentActuals: Schema.Array(Equipment),
  PhysicalAssetActuals: Schema.Array(PhysicalAsset),
  MaterialActuals: Schema.Array(Material)
}).annotate({ identifier: "ISA95JobResponseDataType" })
export interface JobResponse extends Schema.Schema.Type<typeof JobResponse> {}

/** The actuals of a job response: the resources the job ran with. */
export type JobResponseActuals = Pick<JobResponse, "PersonnelActuals" | "EquipmentActuals" | "PhysicalAssetActuals" | "MaterialActuals">

const stateNames = allJobStates.map(normalizedName) as unknown as readonly [StateName, ...Array<StateName>]

/** The form the island wrote before: one normalized state name, the result data as one object, the failure as text. */
export const JobResponseV1 = Schema.Struct({
  ID: Schema.String,
  JobOrderID: Schema.String,
  StartTime: DateTime,
  EndTime: DateTime,
  JobState: Schema.Literals(stateNames).annotate({ expected: "a normalized job state name such as Ended_Completed" }),
  Data: Schema.Record(Schema.String, Schema.Unknown),
  Error: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "JobResponseV1" })
export interface JobResponseV1 extends Schema.Schema.Type<typeof JobResponseV1> {}

import { Option, Schema } from "effect"
import type { JobOrder } from "./JobOrderRecord.js"
import { type JobState, toStoredState } from "./JobState.js"
import { Equipment, type JobResponse, type JobResponseActuals, Material, Personnel, PhysicalAsset } from "./JobResponseModel.js"

/** What the engine knows of a finished job, from which it makes the job response. */
export interface JobResponseInput {
  readonly responseId: string
  readonly jobOrderId: string
  /** Epoch ms. */
  readonly startTime: number
  /** Epoch ms. */
  readonly endTime: number
  readonly state: JobState
  /** The recipe's result data: one parameter per key, in the object's order. */
  readonly data: Readonly<Record<string, unknown>>
  /** Why the job failed: the response's description. */
  readonly error?: string | undefined
  /** The job order the response answers: its requirements become the actuals (none without it). */
  readonly jobOrder?: JobOrder | undefined
}

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> => typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The actual of one requirement entry: the fields the data type knows whose value has its type
 * (a job order is kept as the MES sent it, and only its ids were checked), the rest left out;
 * none when what is left is not one (an equipment without its ID).
 */
const actualOf = <S extends Schema.Top & { readonly fields: Schema.Struct.Fields; readonly DecodingServices: never }>(type: S) => {
  const fits = Object.entries(type.fields).map(([name, field]) => [name, Schema.is(field)] as const)
  const decode = Schema.decodeUnknownOption(type)
  return (entry: unknown): Option.Option<S["Type"]> => {
    if (!isRecord(entry)) return Option.none()
    const known: Record<string, unknown> = {}
    for (const [name, isValue] of fits) {
      const value = entry[name]
      if (value !== undefined && value !== null && isValue(value)) known[name] = value
    }
    return decode(known)
  }
}

const listOf = <A>(requirements: unknown, actual: (entry: unknown) => Option.Option<A>): ReadonlyArray<A> =>
  Array.isArray(requirements) ? requirements.flatMap((entry) => Option.toArray(actual(entry))) : []

const personnel = actualOf(Personnel)
const equipment = actualOf(Equipment)
const physicalAsset = actualOf(PhysicalAsset)
const material = actualOf(Material)

/** The job order's requirements as the response's actuals: what the job ran with; empty lists without a job order. */
export const actualsOf = (jobOrder: JobOrder | undefined): JobResponseActuals => ({
  PersonnelActuals: listOf(jobOrder?.["PersonnelRequirements"], personnel),
  EquipmentActuals: listOf(jobOrder?.["EquipmentRequirements"], equipment),
  PhysicalAssetActuals: listOf(jobOrder?.["PhysicalAssetRequirements"], physicalAsset),
  MaterialActuals: listOf(jobOrder?.["MaterialRequirements"], material)
})

/** The job response of a finished job, as the engine stores it. */
export const makeJobResponse = (input: JobResponseInput): JobResponse => ({
  JobResponseID: input.responseId,
  ...(input.error !== undefined ? { Description: { Text: input.error, Locale: "en" } } : {}),
  JobOrderID: input.jobOrderId,
  StartTime: new Date(input.startTime).toISOString(),
  EndTime: new Date(input.endTime).toISOString(),
  JobState: toStoredState(input.state),
  // A value JSON cannot carry (undefined) is null, so every parameter keeps its Value.
  JobResponseData: Object.entries(input.data).map(([ID, Value]) => ({ ID, Value: Value === undefined ? null : Value })),
  ...actualsOf(input.jobOrder)
})

import { Data } from "effect"
import { checkKeyPart } from "@microdcs/keyschema"

/**
 * A trigger: "when an event of this `type` (and `subject`) appears, run
 * that work master". Stored as one field of the `dag:triggers` hash, its JSON form below.
 *
 * ```json
 * { "id": "restock-on-empty", "scope": "line-1", "type": "com.example.bin.empty.v1",
 *   "subject": "line-1/bin-*", "workMasterId": "wm-restock", "priority": 5,
 *   "requirements": { "EquipmentRequirements": [{ "ID": "agv-1" }] }, "enabled": true }
 * ```
 */
export interface TriggerRow {
  readonly id: string
  /** The scope the job order is created in; its work master list must hold `workMasterId`. */
  readonly scope: string
  /** The CloudEvent `type` that fires it, exactly. */
  readonly type: string
  /**
   * A pattern on the event's `subject` (`*` = any run of characters, all else literal). Absent:
   * the event must belong to the trigger's scope (its subject up to the first `/`).
   */
  readonly subject?: string | undefined
  readonly workMasterId: string
  /** Job order defaults: its `Priority` (OPC UA: higher wins) and requirement lists. */
  readonly priority?: number | undefined
  readonly requirements?: TriggerRequirements | undefined
  readonly enabled: boolean
  /** 1 on create, +1 on every write. */
  readonly version: number
  /** When the row was last written (ISO 8601). */
  readonly updatedAt: string
}

/** The ISA-95 requirement lists a triggered job order carries, as a job order names them. */
export const requirementLists = ["EquipmentRequirements", "MaterialRequirements", "PersonnelRequirements", "PhysicalAssetRequirements"] as const
export type RequirementList = (typeof requirementLists)[number]
export type TriggerRequirements = { readonly [K in RequirementList]?: ReadonlyArray<Readonly<Record<string, unknown>>> }

/** The lists whose entries are identified by `ID` (a material requirement may name a class or a definition). */
const idRequired: ReadonlySet<RequirementList> = new Set(["EquipmentRequirements", "PersonnelRequirements", "PhysicalAssetRequirements"])

/** A trigger refused with every problem found, so an operator fixes them in one go; nothing was stored. */
export class InvalidTrigger extends Data.TaggedError("InvalidTrigger")<{
  /** The id the input named, when it named one. */
  readonly id: string | undefined
  readonly problems: ReadonlyArray<string>
}> {
  override get message() {
    return `trigger${this.id === undefined ? "" : ` ${this.id}`} refused: ${this.problems.join("; ")}`
  }
}

const MAX_TEXT = 512
const idPattern = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/
const controlCharacter = /[\u0000-\u001f\u007f]/

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const inputFields = ["id", "scope", "type", "subject", "workMasterId", "priority", "requirements", "enabled"]
/** Written by the store; accepted in an input (a row shown with `--json` can be put back) and ignored. */
const storedFields = ["version", "updatedAt"]

const keyPartProblem = (field: string, value: unknown): string | undefined => {
  if (typeof value !== "string" || value === "") return `${field} must be a non-empty text`
  if (controlCharacter.test(value)) return `${field} must not contain control characters`
  return checkKeyPart(field, value)?.message
}

const textProblem = (field: string, value: unknown): string | undefined => {
  if (typeof value !== "string" || value.trim() === "") return `${field} must be a non-empty text`
  if (controlCharacter.test(value)) return `${field} must not contain control characters`
  if (Buffer.byteLength(value) > MAX_TEXT) return `${field} must be at most ${MAX_TEXT} bytes`
  return undefined
}

const requirementProblems = (value: unknown): Array<string> => {
  if (!isObject(value)) return ["requirements must be an object of requirement lists"]
  const problems: Array<string> = []
  for (const [list, entries] of Object.entries(value)) {
    if (!(requirementLists as ReadonlyArray<string>).includes(list)) {
      problems.push(`requirements.${list} is not a requirement list (${requirementLists.join(", ")})`)
      continue
    }
    if (!Array.isArray(entries)) {
      problems.push(`requirements.${list} must be a list of objects`)
      continue
    }
    entries.forEach((entry, i) => {
      if (!isObject(entry)) return void problems.push(`requirements.${list}[${i}] must be an object`)
      if (idRequired.has(list as RequirementList)) {
        const bad = keyPartProblem(`requirements.${list}[${i}].ID`, entry["ID"])
        if (bad) problems.push(bad)
      }
    })
  }
  return problems
}

/** What an operator gives: a row without its version and time (those are the store's). */
export type TriggerInput = Omit<TriggerRow, "version" | "updatedAt">

/**
 * A trigger from its JSON form, with every problem listed (not only the first). `version` and
 * `updatedAt` in the input are ignored; `enabled` defaults to true.
 */
export const parseTriggerInput = (input: unknown): { readonly trigger: TriggerInput } | { readonly problems: ReadonlyArray<string>; readonly id?: string } => {
  if (!isObject(input)) return { problems: ["a trigger must be an object"] }
  const problems: Array<string> = []
  for (const field of Object.keys(input)) {
    if (!inputFields.includes(field) && !storedFields.includes(field)) problems.push(`${field} is not a trigger field (${inputFields.join(", ")})`)
  }
  const id = input["id"]
  if (typeof id !== "string" || !idPattern.test(id)) {
    problems.push(`id must start with a letter or digit and hold only letters, digits, '_', '.', '-' (at most 64), got ${JSON.stringify(id)}`)
  }
  for (const field of ["scope", "workMasterId"] as const) {
    const bad = keyPartProblem(field, input[field])
    if (bad) problems.push(bad)
  }
  const typeProblem = textProblem("type", input["type"])
  if (typeProblem) problems.push(typeProblem)
  const subject = input["subject"]
  if (subject !== undefined) {
    const bad = textProblem("subject", subject)
    if (bad) problems.push(bad)
  }
  const priority = input["priority"]
  if (priority !== undefined && !Number.isSafeInteger(priority)) problems.push(`priority must be an integer, got ${JSON.stringify(priority)}`)
  const requirements = input["requirements"]
  if (requirements !== undefined) problems.push(...requirementProblems(requirements))
  const enabled = input["enabled"] ?? true
  if (typeof enabled !== "boolean") problems.push(`enabled must be true or false, got ${JSON.stringify(enabled)}`)
  if (problems.length > 0) return typeof id === "string" ? { problems, id } : { problems }
  return {
    trigger: {
      id: id as string,
      scope: input["scope"] as string,
      type: input["type"] as string,
      ...(subject === undefined ? {} : { subject: subject as string }),
      workMasterId: input["workMasterId"] as string,
      ...(priority === undefined ? {} : { priority: priority as number }),
      ...(requirements === undefined ? {} : { requirements: requirements as TriggerRequirements }),
      enabled: enabled as boolean
    }
  }
}

/** A stored row read back: its input checks again, plus its version and time. */
export const parseStoredTrigger = (text: string): { readonly trigger: TriggerRow } | { readonly problems: ReadonlyArray<string> } => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return { problems: ["the stored row is not JSON"] }
  }
  const parsed = parseTriggerInput(json)
  if ("problems" in parsed) return { problems: parsed.problems }
  const { version, updatedAt } = json as { version?: unknown; updatedAt?: unknown }
  const problems: Array<string> = []
  if (!Number.isSafeInteger(version) || (version as number) < 1) problems.push("the stored row has no version")
  if (typeof updatedAt !== "string") problems.push("the stored row has no updatedAt")
  if (problems.length > 0) return { problems }
  return { trigger: { ...parsed.trigger, version: version as number, updatedAt: updatedAt as string } }
}

/** The JSON text a row is stored as (fields in a fixed order, so an unchanged row stores the same text). */
export const triggerRowJson = (row: TriggerRow): string =>
  JSON.stringify({
    id: row.id,
    scope: row.scope,
    type: row.type,
    ...(row.subject === undefined ? {} : { subject: row.subject }),
    workMasterId: row.workMasterId,
    ...(row.priority === undefined ? {} : { priority: row.priority }),
    ...(row.requirements === undefined ? {} : { requirements: row.requirements }),
    enabled: row.enabled,
    version: row.version,
    updatedAt: row.updatedAt
  })

import { Data, Result, Schema, SchemaIssue } from "effect"
import { JobStates, toStoredState } from "./JobState.js"
import { JobResponse, JobResponseV1 } from "./JobResponseModel.js"

/**
 * A stored or received job response that is neither form: `form` names the one it was read as
 * (the old form when it looks like one: `ID`, `Data` or a state name, and no `JobResponseID`), and
 * `problems` lists everything wrong with it in that form, one line each (`JobState: ...`).
 */
export class MalformedJobResponse extends Data.TaggedError("MalformedJobResponse")<{
  readonly form: "v1" | "v2"
  readonly problems: ReadonlyArray<string>
}> {
  override get message() {
    return `malformed job response (read as ${this.form}): ${this.problems.join("; ")}`
  }
}

/** The old form in the new one: the id renamed, the state as a list, the data as parameters, the failure as the description, no actuals. */
export const upgradeJobResponse = (v1: JobResponseV1): JobResponse => ({
  JobResponseID: v1.ID,
  ...(v1.Error !== undefined ? { Description: { Text: v1.Error, Locale: "en" } } : {}),
  JobOrderID: v1.JobOrderID,
  StartTime: v1.StartTime,
  EndTime: v1.EndTime,
  JobState: toStoredState(JobStates[v1.JobState]),
  JobResponseData: Object.entries(v1.Data).map(([ID, Value]) => ({ ID, Value })),
  PersonnelActuals: [],
  EquipmentActuals: [],
  PhysicalAssetActuals: [],
  MaterialActuals: []
})

const decodeV2 = Schema.decodeUnknownResult(JobResponse, { errors: "all" })
const decodeV1 = Schema.decodeUnknownResult(JobResponseV1, { errors: "all" })
const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/** `JobState[0].StateNumber` */
const pathText = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }> | undefined): string =>
  (path ?? []).reduce<string>((text, part) => {
    const key = typeof part === "object" ? part.key : part
    return typeof key === "number" ? `${text}[${key}]` : text === "" ? String(key) : `${text}.${String(key)}`
  }, "")

const problemsOf = (error: Schema.SchemaError): ReadonlyArray<string> =>
  formatter(error.issue).issues.map((issue) => {
    const where = pathText(issue.path)
    return where === "" ? issue.message : `${where}: ${issue.message}`
  })

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> => typeof value === "object" && value !== null && !Array.isArray(value)

/** The old form's marks, so its problems are the ones reported for a document that meant to be one. */
const looksLikeV1 = (value: unknown): boolean =>
  isRecord(value) && !("JobResponseID" in value) && ("ID" in value || "Data" in value || typeof value["JobState"] === "string")

/**
 * A job response in the current form, from either form: the current one as it is (fields it does
 * not know left out), the old one upgraded (see {@link upgradeJobResponse}). Never throws.
 */
export const decodeJobResponse = (input: unknown): Result.Result<JobResponse, MalformedJobResponse> => {
  if (!isRecord(input)) return Result.fail(new MalformedJobResponse({ form: "v2", problems: ["a job response must be a JSON object"] }))
  const v2 = decodeV2(input)
  if (Result.isSuccess(v2)) return Result.succeed(v2.success)
  const v1 = decodeV1(input)
  if (Result.isSuccess(v1)) return Result.succeed(upgradeJobResponse(v1.success))
  return Result.fail(
    looksLikeV1(input) ? new MalformedJobResponse({ form: "v1", problems: problemsOf(v1.failure) }) : new MalformedJobResponse({ form: "v2", problems: problemsOf(v2.failure) })
  )
}

/** {@link decodeJobResponse} of a document's JSON text, as the store keeps it. */
export const decodeJobResponseText = (text: string): Result.Result<JobResponse, MalformedJobResponse> => {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return Result.fail(new MalformedJobResponse({ form: "v2", problems: ["the document is not JSON"] }))
  }
  return decodeJobResponse(parsed)
}

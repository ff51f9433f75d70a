import { Result, Option } from "effect"
import { isReferenceKind, type ReferenceKind, referenceKinds } from "@microdcs/keyschema"
import { formatPath, validateWorkMasterRecipe } from "@microdcs/sfc"
import { BadRequest, ensureJson, isObject, malformed, missing, payloadObject, readCount, readId } from "./Payload.js"

/**
 * Station configuration events: `...config.{kind}.v1`, scope from the subject,
 * extension `method` = PUT (default) or DELETE. Payloads reuse the ISA-95 data types the job
 * order references, so what an MES sends to configure a station looks like what it references.
 */

export const configKinds = [...referenceKinds, "workmaster", "jobacceptance"] as const
export type ConfigKind = (typeof configKinds)[number]

export type ConfigEventType<K extends ConfigKind = ConfigKind> = `com.github.aschamberger.ISA95-JOBCONTROL_V2.config.${K}.v1`

export const configEventType = <K extends ConfigKind>(kind: K): ConfigEventType<K> =>
  `com.github.aschamberger.ISA95-JOBCONTROL_V2.config.${kind}.v1`

/** `ConfigEventTypes.equipment === "com.github.aschamberger.ISA95-JOBCONTROL_V2.config.equipment.v1"`. */
export const ConfigEventTypes = Object.freeze(Object.fromEntries(configKinds.map((k) => [k, configEventType(k)]))) as {
  readonly [K in ConfigKind]: ConfigEventType<K>
}

const byType: ReadonlyMap<string, ConfigKind> = new Map(configKinds.map((kind) => [configEventType(kind), kind]))

/** The configuration kind a CloudEvent type names; None for any other type. */
export const parseConfigType = (type: string): Option.Option<ConfigKind> => Option.fromNullishOr(byType.get(type))

/**
 * The id field of each reference list entry, as the ISA-95 data types name it
 * (ISA95EquipmentDataType.ID, ISA95MaterialDataType.MaterialClassID, ...).
 */
export const referenceIdField: { readonly [K in ReferenceKind]: string } = {
  equipment: "ID",
  materialclass: "MaterialClassID",
  materialdefinition: "MaterialDefinitionID",
  personnel: "ID",
  physicalasset: "ID"
}

export type ConfigAction = "PUT" | "DELETE"

export type ConfigCommand =
  | { readonly _tag: "ReferenceConfig"; readonly scope: string; readonly kind: ReferenceKind; readonly action: ConfigAction; readonly ids: ReadonlyArray<string> }
  | { readonly _tag: "WorkMasterPut"; readonly scope: string; readonly id: string; readonly document: Readonly<Record<string, unknown>> }
  | { readonly _tag: "WorkMasterDelete"; readonly scope: string; readonly id: string }
  | { readonly _tag: "AcceptancePut"; readonly scope: string; readonly limit: number }
  | { readonly _tag: "AcceptanceDelete"; readonly scope: string }

const actionOf = (extensions: Readonly<Record<string, string>>): Result.Result<ConfigAction, BadRequest> => {
  const method = (extensions["method"] ?? "PUT").toUpperCase()
  return method === "PUT" || method === "DELETE"
    ? Result.succeed(method)
    : Result.fail(new BadRequest({ kind: "InvalidMethod", message: `method must be PUT or DELETE, got '${extensions["method"]}'` }))
}

/** One ISA-95 object or a list of them, each carrying `field`: the ids, without repeats. */
const referenceIds = (data: unknown, kind: ReferenceKind): Result.Result<ReadonlyArray<string>, BadRequest> => {
  if (data === undefined || data === null) return missing("the request carries no data")
  const entries: ReadonlyArray<unknown> = Array.isArray(data) ? data : [data]
  if (entries.length === 0) return malformed(`a ${kind} configuration needs at least one entry`)
  const field = referenceIdField[kind]
  const ids: Array<string> = []
  for (const [i, entry] of entries.entries()) {
    if (!isObject(entry)) return malformed(`entry ${i} must be an object with ${field}`)
    const id = readId(entry, field, Array.isArray(data) ? `[${i}].${field}` : field)
    if (Result.isFailure(id)) return Result.fail(id.failure)
    ids.push(id.success)
  }
  return Result.succeed([...new Set(ids)])
}

/**
 * A work master to store: any object with an `ID`. One whose `dataschema` is the recipe schema
 * must carry a valid recipe; every problem is listed, so the sender can fix them in one go.
 */
const workMasterDocument = (data: unknown) =>
  Result.gen(function* () {
    const document = yield* payloadObject(data)
    const id = yield* readId(document, "ID")
    yield* ensureJson(document, "the work master")
    const recipe = validateWorkMasterRecipe(document)
    if (recipe !== undefined && Result.isFailure(recipe)) {
      const problems = recipe.failure
      const list = problems.map((p) => (p.path.length > 0 ? `${formatPath(p.path)}: ${p.message}` : p.message)).join("; ")
      return yield* Result.fail(
        new BadRequest({ kind: "InvalidRecipe", message: `work master ${id}: ${problems.length} recipe problem(s): ${list}`, problems })
      )
    }
    return { id, document }
  })

/** The limit of a jobacceptance PUT: `{Limit: n}` (or OPC UA's `MaxDownloadableJobOrders`); 0 = unlimited. */
const acceptanceLimit = (data: unknown) =>
  Result.gen(function* () {
    const payload = yield* payloadObject(data)
    const bounds = { min: 0, max: Number.MAX_SAFE_INTEGER }
    const limit = (yield* readCount(payload, "Limit", bounds)) ?? (yield* readCount(payload, "MaxDownloadableJobOrders", bounds))
    return limit ?? (yield* missing("Limit is required"))
  })

/** Parses a configuration event of `kind` for `scope`. */
export const parseConfigCommand = (
  kind: ConfigKind,
  scope: string,
  data: unknown,
  extensions: Readonly<Record<string, string>>
): Result.Result<ConfigCommand, BadRequest> =>
  Result.gen(function* () {
    const action = yield* actionOf(extensions)
    if (isReferenceKind(kind)) {
      return { _tag: "ReferenceConfig", scope, kind, action, ids: yield* referenceIds(data, kind) } as const
    }
    if (kind === "workmaster") {
      if (action === "DELETE") return { _tag: "WorkMasterDelete", scope, id: yield* readId(yield* payloadObject(data), "ID") } as const
      const { id, document } = yield* workMasterDocument(data)
      return { _tag: "WorkMasterPut", scope, id, document } as const
    }
    return action === "DELETE"
      ? ({ _tag: "AcceptanceDelete", scope } as const)
      : ({ _tag: "AcceptancePut", scope, limit: yield* acceptanceLimit(data) } as const)
  })

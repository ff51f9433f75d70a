import { Result } from "effect"
import type { JobOrder } from "@microdcs/job-state"
import type { ReferenceKind } from "@microdcs/keyschema"
import { asId, type BadRequest, isObject, malformed } from "./Payload.js"

/**
 * The station configuration ids a job order references. Each must be
 * in its scope set before the job order is accepted.
 */
export interface JobOrderReferences {
  /** Per reference list kind, the ids referenced (only kinds with at least one id). */
  readonly lists: ReadonlyArray<{ readonly kind: ReferenceKind; readonly ids: ReadonlyArray<string> }>
  /** `WorkMasterID[].ID`: checked against the scope's work master list. */
  readonly workMasters: ReadonlyArray<string>
}

interface RequirementField {
  readonly field: string
  readonly idField: string
  readonly kind: ReferenceKind
  /**
   * Equipment, personnel and physical asset requirements are identified by their `ID`; a
   * material requirement may be identified by class, definition, lot or sublot, so neither of
   * the two ids we check is required.
   */
  readonly required: boolean
}

/** Where each reference list kind is referenced from a job order. */
export const requirementFields: ReadonlyArray<RequirementField> = [
  { field: "EquipmentRequirements", idField: "ID", kind: "equipment", required: true },
  { field: "MaterialRequirements", idField: "MaterialClassID", kind: "materialclass", required: false },
  { field: "MaterialRequirements", idField: "MaterialDefinitionID", kind: "materialdefinition", required: false },
  { field: "PersonnelRequirements", idField: "ID", kind: "personnel", required: true },
  { field: "PhysicalAssetRequirements", idField: "ID", kind: "physicalasset", required: true }
]

const idsOf = (jobOrder: JobOrder, { field, idField, required }: RequirementField): Result.Result<ReadonlyArray<string>, BadRequest> => {
  const entries = jobOrder[field]
  if (entries === undefined || entries === null) return Result.succeed([])
  if (!Array.isArray(entries) || !entries.every(isObject)) return malformed(`JobOrder.${field} must be a list of objects`)
  const ids: Array<string> = []
  for (const [i, entry] of (entries as ReadonlyArray<Readonly<Record<string, unknown>>>).entries()) {
    const value = entry[idField]
    if (value === undefined || value === null) {
      if (required) return malformed(`JobOrder.${field}[${i}].${idField} is required`)
      continue
    }
    const id = asId(value, `JobOrder.${field}[${i}].${idField}`)
    if (Result.isFailure(id)) return Result.fail(id.failure)
    ids.push(id.success)
  }
  return Result.succeed([...new Set(ids)])
}

/** The referenced ids of a job order, or what is malformed about its requirement lists. */
export const referencesOf = (jobOrder: JobOrder): Result.Result<JobOrderReferences, BadRequest> =>
  Result.gen(function* () {
    const lists: Array<{ kind: ReferenceKind; ids: ReadonlyArray<string> }> = []
    for (const requirement of requirementFields) {
      const ids = yield* idsOf(jobOrder, requirement)
      if (ids.length > 0) lists.push({ kind: requirement.kind, ids })
    }
    // asJobOrder already checked the shape of WorkMasterID; the ids must still be key parts.
    const workMasters: Array<string> = []
    for (const [i, { ID }] of (jobOrder.WorkMasterID ?? []).entries()) workMasters.push(yield* asId(ID, `JobOrder.WorkMasterID[${i}].ID`))
    return { lists, workMasters: [...new Set(workMasters)] }
  })

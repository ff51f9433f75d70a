import type { IndexedFamily } from "./IndexedFamily.js"
import { type Finding, problemsOf } from "./IndexFinding.js"
import { repairFinding } from "./IndexRepair.js"
import { walkDocuments, walkReferences, walkScopes } from "./IndexWalk.js"
import { jobResponseFailedFamily } from "./IndexJobResponseFailed.js"
import { jobOrderSearchFamily } from "./IndexJobOrderSearch.js"

/** A core family: one phase of the walk in IndexWalk.ts, repaired by the scripts of IndexRepair.ts. */
const coreFamily = (name: string, inspect: IndexedFamily<Finding>["inspect"]): IndexedFamily<Finding> => ({
  name,
  inspect,
  problemsOf,
  repair: repairFinding
})

/**
 * The families of the core documents, in the order the default {@link IndexRegistry} walks them:
 * the `scopes` registry first (a registry of the wrong type is repaired before documents
 * register their scopes in it), reference lists last. The failed set of job responses is a
 * family of its own (IndexJobResponseFailed.ts), walked right after the job responses.
 */
export const coreIndexedFamilies: ReadonlyArray<IndexedFamily> = [
  coreFamily("scopes", walkScopes),
  coreFamily("joborder", (ctx, handle) => walkDocuments(ctx, "jobOrder", handle)),
  // The search index of job orders: entries derived by its scripts, checked and rebuilt by them.
  jobOrderSearchFamily as IndexedFamily,
  coreFamily("jobresponse", (ctx, handle) => walkDocuments(ctx, "jobResponse", handle)),
  jobResponseFailedFamily as IndexedFamily,
  coreFamily("workmaster", (ctx, handle) => walkDocuments(ctx, "workMaster", handle)),
  coreFamily("references", walkReferences)
]

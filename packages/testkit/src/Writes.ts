import { Effect } from "effect"
import { encodeJobOrderRecord, type JobOrder, type JobState, JobStates, priorityOf } from "@microdcs/job-state"
import { JobOrderDao, WorkMasterDao } from "@microdcs/store"

/** How job control would have written the job order; the defaults are a fresh `StoreAndStart`. */
export interface JobOrderPut {
  readonly state?: JobState
  /** The change word on the scope's change stream (job control writes the method name). */
  readonly change?: string
  /** 0 (the default) creates only, as `Store` does; -1 writes whatever is there. */
  readonly expectedVersion?: number
}

/**
 * Writes a job order record directly, as the job-control processor would after the method that
 * moved it to `state`; an order in EndState is retired (kept 60 s), as Clear and Cancel do.
 */
export const putJobOrder = (scope: string, jobOrder: JobOrder, put: JobOrderPut = {}) => {
  const { state = JobStates.AllowedToStart_Ready, change = "StoreAndStart", expectedVersion = 0 } = put
  return Effect.flatMap(JobOrderDao, (dao) =>
    dao.put({
      id: jobOrder.JobOrderID,
      scope,
      doc: encodeJobOrderRecord(jobOrder, state),
      priority: priorityOf(jobOrder),
      expectedVersion,
      change,
      ...(state.main === "EndState" ? { retainMs: 60_000 } : {})
    })
  )
}

/** Stores a work master document (its `ID` names it) in a scope, replacing one already there. */
export const putWorkMaster = (scope: string, workMaster: Record<string, unknown>) =>
  Effect.flatMap(WorkMasterDao, (dao) =>
    dao.put({ id: workMaster["ID"] as string, scope, doc: JSON.stringify(workMaster), expectedVersion: -1 })
  )

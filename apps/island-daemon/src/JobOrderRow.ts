import type { ListedJobOrder } from "@microdcs/job-control"

/** A job order as the API's and the console's scope lists show it. */
export interface JobOrderRow {
  readonly id: string
  readonly priority: number
  /** `null` when the list names an id whose document is missing. */
  readonly version: number | null
  /** The normalized state; `null` without a readable document. */
  readonly state: string | null
}

export const jobOrderRow = (listed: ListedJobOrder): JobOrderRow => ({
  id: listed.id,
  priority: listed.listedPriority,
  version: listed.stored?.version ?? null,
  state: listed.state
})

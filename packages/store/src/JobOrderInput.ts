import type { ExpectedVersion } from "./Document.js"

export interface PutJobOrder {
  readonly id: string
  readonly scope: string
  /** The job order as JSON text. */
  readonly doc: string
  /** OPC UA priority: a higher value wins, so lists put it first. */
  readonly priority: number
  readonly expectedVersion: ExpectedVersion
  /** The method that caused the write (`Store`, `Start`, ...); default `put`. */
  readonly change?: string | undefined
  /** Operation id stored with the write; default a new UUID. Pass your own to make retries idempotent. */
  readonly op?: string | undefined
  /** Acceptance limit counted inside the script when the id is not yet listed; 0 or absent = none. */
  readonly limit?: number | undefined
  /** Retire the job order: take it out of the scope list and let the document expire after this many ms. */
  readonly retainMs?: number | undefined
  /** Who caused the write, as its writer encodes it (job-state's `encodeOrigin`): kept in the change entry. */
  readonly origin?: string | undefined
}

export interface DeleteJobOrder {
  readonly id: string
  readonly expectedVersion?: ExpectedVersion | undefined
  readonly op?: string | undefined
  readonly change?: string | undefined
}

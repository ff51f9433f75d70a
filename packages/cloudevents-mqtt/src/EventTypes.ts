/**
 * CloudEvent type names of job control: the ISA-95 job control methods, the two
 * Machinery Jobs queries, and station configuration.
 */

export const JOB_CONTROL_METHODS = [
  "Store",
  "StoreAndStart",
  "Update",
  "Start",
  "RevokeStart",
  "Pause",
  "Resume",
  "Stop",
  "Abort",
  "Cancel",
  "Clear"
] as const
export type JobControlMethod = (typeof JOB_CONTROL_METHODS)[number]

export const JOB_QUERIES = ["RequestJobResponseByJobOrderID", "RequestJobResponseByJobOrderState"] as const
export type JobQuery = (typeof JOB_QUERIES)[number]

export const CONFIG_KINDS = [
  "equipment",
  "materialclass",
  "materialdefinition",
  "personnel",
  "physicalasset",
  "workmaster",
  "jobacceptance"
] as const
export type ConfigKind = (typeof CONFIG_KINDS)[number]

export const methodEventType = (method: JobControlMethod): string => `org.opcfoundation.ISA95-JOBCONTROL_V2.${method}.v2`
export const queryEventType = (query: JobQuery): string => `org.opcfoundation.Machinery.Jobs.${query}.v1`
export const configEventType = (kind: ConfigKind): string => `com.github.aschamberger.ISA95-JOBCONTROL_V2.config.${kind}.v1`

export type EventTypeName =
  | { readonly kind: "method"; readonly method: JobControlMethod }
  | { readonly kind: "query"; readonly query: JobQuery }
  | { readonly kind: "config"; readonly config: ConfigKind }

const byType = new Map<string, EventTypeName>([
  ...JOB_CONTROL_METHODS.map((method) => [methodEventType(method), { kind: "method", method }] as const),
  ...JOB_QUERIES.map((query) => [queryEventType(query), { kind: "query", query }] as const),
  ...CONFIG_KINDS.map((config) => [configEventType(config), { kind: "config", config }] as const)
])

/** What a CloudEvent type names, or undefined for a type the island does not handle. */
export const parseEventType = (type: string): EventTypeName | undefined => byType.get(type)

import { type JobOrder, MethodEventTypes } from "@microdcs/job-state"
import { dedupeHash } from "@microdcs/keyschema"
import type { TriggerRow } from "@microdcs/store"
import { type JobControlRequest, scopeOf } from "./Request.js"

/**
 * Which triggers an event fires and the job order each one starts. Pure
 * and transport-free: the MQTT binding turns a CloudEvent into a {@link TriggerEvent}, the
 * runtime hands the request to `JobControl`.
 */

/** An event as the trigger runtime sees it. */
export interface TriggerEvent {
  readonly source: string
  readonly id: string
  readonly type: string
  readonly subject?: string | undefined
  /** The event's scope: its subject up to the first `/`, or what its topic says when it has no subject. */
  readonly scope?: string | undefined
}

/** A trigger ready to match: its row and its subject pattern compiled once. */
export interface CompiledTrigger {
  readonly row: TriggerRow
  readonly subject: RegExp | undefined
}

/** `*` matches any run of characters (none included); everything else is literal. */
export const subjectPattern = (pattern: string): RegExp =>
  new RegExp(`^${pattern.split("*").map((part) => part.replace(/[\\^$.|?+()[\]{}]/g, "\\$&")).join(".*")}$`, "s")

export const compileTrigger = (row: TriggerRow): CompiledTrigger => ({
  row,
  subject: row.subject === undefined ? undefined : subjectPattern(row.subject)
})

/**
 * An enabled trigger fires for an event of its `type` whose subject matches its pattern; with no
 * pattern, for an event of its own scope.
 */
export const triggerMatches = (trigger: CompiledTrigger, event: TriggerEvent): boolean => {
  const { row, subject } = trigger
  if (!row.enabled || row.type !== event.type) return false
  if (subject !== undefined) return subject.test(event.subject ?? "")
  return (event.scope ?? scopeOf(event.subject)) === row.scope
}

/** The triggers an event fires, in the order given (the catalog keeps them by id). */
export const matchingTriggers = (triggers: ReadonlyArray<CompiledTrigger>, event: TriggerEvent): ReadonlyArray<TriggerRow> =>
  triggers.filter((t) => triggerMatches(t, event)).map((t) => t.row)

/**
 * The job order a trigger starts for an event: `trg-{triggerId}-{hash of (source, id)}`, the same
 * for every delivery of the event (on any instance), so a redelivery finds it taken and starts
 * nothing. The hash is the dedupe hash: fixed length, unambiguous for any (source, id).
 */
export const triggerJobOrderId = (triggerId: string, event: Pick<TriggerEvent, "source" | "id">): string =>
  `trg-${triggerId}-${dedupeHash(event.source, event.id)}`

/** The job order a trigger creates: its work master, its defaults, and where it came from. */
export const triggerJobOrder = (row: TriggerRow, event: TriggerEvent): JobOrder => ({
  JobOrderID: triggerJobOrderId(row.id, event),
  WorkMasterID: [{ ID: row.workMasterId }],
  ...(row.priority === undefined ? {} : { Priority: row.priority }),
  ...row.requirements,
  Description: `started by trigger ${row.id} on ${event.type} (source ${event.source}, id ${event.id})`
})

/**
 * The StoreAndStart request a trigger makes, for `JobControl.handle`: the same parsing and
 * acceptance checks as an MES's. `attempt` makes the request's own id (and so its operation id)
 * unique per try, so a second try always meets the first one's job order as "already exists".
 */
export const triggerRequest = (row: TriggerRow, event: TriggerEvent, source: string, attempt: string): JobControlRequest => {
  const jobOrder = triggerJobOrder(row, event)
  return {
    id: `${jobOrder.JobOrderID}.${attempt}`,
    source,
    type: MethodEventTypes.StoreAndStart,
    subject: row.scope,
    data: { JobOrder: jobOrder },
    extensions: { triggerid: row.id },
    origin: { kind: "trigger", id: row.id }
  }
}
